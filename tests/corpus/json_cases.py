"""Corpus: completions answering a JSONAdapter prompt, as real models write them."""

from __future__ import annotations

from tests.corpus.case import Case

TRIAGE_OK = {"category": "billing", "urgency": 4, "needs_human": True}
REASON_OK = {"reasoning": "Simple sum.", "answer": 4}

JSON_CASES = [
    # -- well-formed -------------------------------------------------------------------------
    Case("json-ok", "reason", '{"reasoning": "Simple sum.", "answer": 4}', REASON_OK),
    Case(
        "json-ok-indented",
        "triage",
        '{\n  "category": "billing",\n  "urgency": 4,\n  "needs_human": true\n}',
        TRIAGE_OK,
    ),
    Case(
        "json-ok-people",
        "people",
        '{"people": [{"name": "Al", "age": 3}, {"name": "Bo", "age": 5}]}',
        {"people": [{"name": "Al", "age": 3}, {"name": "Bo", "age": 5}]},
    ),
    Case(
        "json-ok-nulls",
        "optional",
        '{"maybe": null, "note": null}',
        {"maybe": None, "note": None},
    ),
    # -- fences and prose -----------------------------------------------------------------------
    Case(
        "json-fenced",
        "reason",
        '```json\n{"reasoning": "Simple sum.", "answer": 4}\n```',
        REASON_OK,
    ),
    Case(
        "json-fence-unclosed",
        "reason",
        '```json\n{"reasoning": "Simple sum.", "answer": 4}\n',
        REASON_OK,
    ),
    Case(
        "json-fence-no-language",
        "reason",
        '```\n{"reasoning": "Simple sum.", "answer": 4}\n```',
        REASON_OK,
    ),
    Case(
        "json-prose-around",
        "reason",
        'Here is the JSON you asked for: {"reasoning": "Simple sum.", "answer": 4} Let me know!',
        REASON_OK,
    ),
    Case(
        "json-prose-then-fence",
        "triage",
        'Sure, here it is:\n\n```json\n{"category": "billing", "urgency": 4, "needs_human": true}\n```\n'
        "I chose billing because of the double charge.",
        TRIAGE_OK,
    ),
    # -- damage json-repair should mend ----------------------------------------------------
    Case("json-trailing-comma", "reason", '{"reasoning": "Simple sum.", "answer": 4,}', REASON_OK),
    Case("json-single-quotes", "reason", "{'reasoning': 'Simple sum.', 'answer': 4}", REASON_OK),
    Case("json-unquoted-keys", "reason", '{reasoning: "Simple sum.", answer: 4}', REASON_OK),
    Case(
        "json-line-comments",
        "triage",
        '{\n  "category": "billing", // double charge\n  "urgency": 4,\n  "needs_human": true\n}',
        TRIAGE_OK,
    ),
    Case(
        "json-block-comment",
        "reason",
        '{"reasoning": "Simple sum.", /* easy */ "answer": 4}',
        REASON_OK,
    ),
    Case(
        "json-python-literals",
        "triage",
        "{'category': 'billing', 'urgency': 4, 'needs_human': True}",
        TRIAGE_OK,
    ),
    Case(
        "json-python-none-inside",
        "optional",
        "{'maybe': None, 'note': 'no number given'}",
        {"maybe": None, "note": "no number given"},
    ),
    Case(
        "json-mixed-true-none",
        "optional",
        '{"maybe": None, "note": "fine"}',
        {"maybe": None, "note": "fine"},
    ),
    Case(
        "json-smart-quotes",
        "reason",
        "{“reasoning”: “Simple sum.”, “answer”: 4}",
        REASON_OK,
    ),
    Case("json-missing-comma", "reason", '{"reasoning": "Simple sum." "answer": 4}', REASON_OK),
    Case(
        "json-unescaped-quotes",
        "summary",
        '{"summary": "She said "no" to the offer"}',
        {"summary": 'She said "no" to the offer'},
    ),
    Case(
        "json-raw-newline",
        "summary",
        '{"summary": "Line one\nLine two"}',
        {"summary": "Line one\nLine two"},
    ),
    Case("json-stray-bracket", "reason", '{"reasoning": "Simple sum.", "answer": 4}}', REASON_OK),
    Case(
        "json-stray-bracket-end", "reason", '{"reasoning": "Simple sum.", "answer": 4}]', REASON_OK
    ),
    # -- which object ------------------------------------------------------------------------
    Case(
        "json-schema-echo-first",
        "reason",
        '{"type": "object", "properties": {"reasoning": {"type": "string"}, "answer": {"type": "integer"}}}\n'
        '{"reasoning": "Simple sum.", "answer": 4}',
        REASON_OK,
    ),
    Case(
        "json-input-echo-first",
        "triage",
        'Input: {"ticket": "I was charged twice"}\nOutput: {"category": "billing", "urgency": 4, '
        '"needs_human": true}',
        TRIAGE_OK,
    ),
    Case(
        "json-example-then-answer",
        "qa",
        'Format: {"answer": "<int>"}\nAnswer: {"answer": 42}',
        {"answer": 42},
    ),
    Case(
        "json-wrapper-output",
        "reason",
        '{"output": {"reasoning": "Simple sum.", "answer": 4}}',
        REASON_OK,
    ),
    Case(
        "json-wrapper-response",
        "triage",
        '{"response": {"category": "billing", "urgency": 4, "needs_human": true}}',
        TRIAGE_OK,
    ),
    Case(
        "json-one-element-array",
        "reason",
        '[{"reasoning": "Simple sum.", "answer": 4}]',
        REASON_OK,
    ),
    Case(
        "json-nested-as-string",
        "person",
        '{"person": "{\\"name\\": \\"Ann\\", \\"age\\": 34}"}',
        {"person": {"name": "Ann", "age": 34}},
    ),
    Case(
        "json-list-as-string",
        "tags",
        '{"tags": "[\\"urgent\\", \\"refund\\"]"}',
        {"tags": ["urgent", "refund"]},
    ),
    Case("json-key-case", "reason", '{"Reasoning": "Simple sum.", "Answer": 4}', REASON_OK),
    Case(
        "json-key-camel",
        "needs",
        '{"needsHuman": true, "reasonText": "Angry customer."}',
        {"needs_human": True, "reason_text": "Angry customer."},
    ),
    Case(
        "json-key-spaces",
        "needs",
        '{"Needs Human": false, "Reason Text": "Routine."}',
        {"needs_human": False, "reason_text": "Routine."},
    ),
    Case(
        "json-extra-keys",
        "reason",
        '{"reasoning": "Simple sum.", "answer": 4, "confidence": 0.9, "sources": []}',
        REASON_OK,
    ),
    Case("json-bare-number", "qa", "42", {"answer": 42}),
    Case("json-bare-string", "summary", '"Moved to Friday."', {"summary": "Moved to Friday."}),
    Case("json-bare-array", "tags", '["urgent", "refund"]', {"tags": ["urgent", "refund"]}),
    Case("json-bare-bool-word", "flag", "Yes", {"flag": True}),
    Case(
        "json-sections-instead",
        "reason",
        "[[ ## reasoning ## ]]\nSimple sum.\n\n[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]",
        REASON_OK,
    ),
    Case(
        "json-sections-instead-triage",
        "triage",
        "[[ ## category ## ]]\nbilling\n[[ ## urgency ## ]]\n4\n[[ ## needs_human ## ]]\nTrue",
        TRIAGE_OK,
    ),
    Case(
        "json-think-block",
        "reason",
        '<think>Maybe {"answer": 5}? No.</think>\n{"reasoning": "Simple sum.", "answer": 4}',
        REASON_OK,
    ),
    # -- cut off after a complete value: only the object's closing brace is missing -------
    Case(
        "json-cut-only-brace-missing",
        "triage",
        '{"category": "billing", "urgency": 4, "needs_human": true',
        TRIAGE_OK,
    ),
    Case(
        "json-cut-after-closed-list",
        "extract",
        '{"count": 2, "names": ["Al", "Bo"]',
        {"names": ["Al", "Bo"], "count": 2},
    ),
    Case(
        "json-cut-after-string-in-fence",
        "reason",
        '```json\n{"answer": 4, "reasoning": "Simple sum."\n```',
        REASON_OK,
    ),
    Case(
        "json-fail-cut-optional-unwritten",
        "optional",
        '{"note": "Call back on Monday."',
        error=["maybe"],
    ),
    # -- a stray opening brace before the answer ---------------------------------------------
    Case(
        "json-stray-brace-line",
        "reason",
        '{\n{"reasoning": "Simple sum.", "answer": 4}',
        REASON_OK,
    ),
    Case(
        "json-stray-brace-before-fence",
        "triage",
        '{\n```json\n{"category": "billing", "urgency": 4, "needs_human": true}\n```',
        TRIAGE_OK,
    ),
    # -- the prompt's structure echoed, `{field}` unfilled ------------------------------------
    Case(
        "json-answer-then-template-echo",
        "reason",
        '{"reasoning": "Simple sum.", "answer": 4}\n\nAs requested, in the format '
        '{"reasoning": "{reasoning}", "answer": "{answer}"}',
        REASON_OK,
    ),
    Case(
        "json-template-echo-then-answer",
        "address",
        '{\n  "zip_code": "{zip_code}",\n  "city": "{city}"\n}\n\n'
        '{\n  "zip_code": "75001",\n  "city": "Paris"\n}',
        {"zip_code": "75001", "city": "Paris"},
    ),
    # -- the model runs on after its answer -------------------------------------------------
    # An answer, then an invented tool observation or a new turn, then another object: the
    # later one is the model continuing a transcript it was not asked to write.
    Case(
        "json-runaway-observation",
        "qa",
        '{"answer": 42}\nObservation: the calculator returned 41.\nThought: I should use '
        'the tool\'s value.\n{"answer": 41}',
        {"answer": 42},
    ),
    Case(
        "json-runaway-new-turn",
        "triage",
        '{"category": "billing", "urgency": 4, "needs_human": true}\n\nUser: Are you sure '
        'it is billing?\nAssistant: {"category": "bug", "urgency": 2, "needs_human": false}',
        TRIAGE_OK,
    ),
    Case(
        "json-runaway-template-token",
        "reason",
        '```json\n{"reasoning": "Simple sum.", "answer": 4}\n```<|im_end|>\n<|im_start|>user\n'
        'Now 3+3?<|im_end|>\n<|im_start|>assistant\n{"reasoning": "Again.", "answer": 6}',
        REASON_OK,
    ),
    Case(
        "json-runaway-tool-result",
        "qa",
        '{"answer": 7}\n**Tool result:** {"answer": 8}',
        {"answer": 7},
    ),
    # Without a new turn between them, a later object still corrects an earlier one.
    Case(
        "json-correction-after-prose",
        "qa",
        '{"answer": 41}\nWait, I mis-added. Corrected:\n{"answer": 42}',
        {"answer": 42},
    ),
    # -- typed values inside JSON ------------------------------------------------------------
    Case("json-int-as-string", "qa", '{"answer": "42"}', {"answer": 42}),
    Case("json-int-with-unit", "qa", '{"answer": "30 items"}', {"answer": 30}),
    Case("json-int-float", "qa", '{"answer": 42.0}', {"answer": 42}),
    Case("json-duplicate-key-same-value", "qa", '{"answer": 4, "answer": 4}', {"answer": 4}),
    Case("json-price-currency", "price", '{"price": "$1,234.50"}', {"price": 1234.5}),
    Case("json-bool-word", "flag", '{"flag": "Yes"}', {"flag": True}),
    Case(
        "json-bool-reason", "flag", '{"flag": "No - the order already shipped."}', {"flag": False}
    ),
    Case(
        "json-literal-case",
        "triage",
        '{"category": "Billing", "urgency": 4, "needs_human": true}',
        TRIAGE_OK,
    ),
    Case("json-numeric-literal-string", "level", '{"level": "2"}', {"level": 2}),
    Case("json-enum-name", "color", '{"color": "RED"}', {"color": "red"}),
    Case(  # a string is no list of strings: `"Sorry, no"` would be two items too
        "json-list-comma-string",
        "tags",
        '{"tags": "urgent, refund"}',
        error=["tags"],
    ),
    Case(
        "json-dict-value",
        "counts",
        '{"counts": {"apples": 3, "pears": 0}}',
        {"counts": {"apples": 3, "pears": 0}},
    ),
    Case(
        "json-str-number-kept",
        "address",
        '{"zip_code": "02139", "city": "Cambridge"}',
        {"zip_code": "02139", "city": "Cambridge"},
    ),
    Case(
        "json-str-from-number",
        "address",
        '{"zip_code": 2139, "city": "Cambridge"}',
        {"zip_code": "2139", "city": "Cambridge"},
    ),
    Case(
        "json-score-and-label",
        "score",
        '{"score": "0.8", "label": "POS"}',
        {"score": 0.8, "label": "pos"},
    ),
    # -- the answer wrapped as a string of JSON under one key ----------------------------------
    Case(
        "json-wrapped-string-escaped",
        "reason",
        '{"response": "{\\"reasoning\\": \\"Simple sum.\\", \\"answer\\": 4}"}',
        REASON_OK,
    ),
    Case(
        "json-wrapped-string-unescaped",
        "triage",
        '{"output": "{"category": "billing", "urgency": 4, "needs_human": true}"}',
        TRIAGE_OK,
    ),
    Case(
        "json-wrapped-string-newlines-inner-quotes",
        "reason",
        '{"result": "{\\n  \\"reasoning\\": \\"The note says \\"add them\\", so 2 + 2.\\",\\n'
        '  \\"answer\\": 4\\n}"}',
        {"reasoning": 'The note says "add them", so 2 + 2.', "answer": 4},
    ),
    Case(
        "json-wrapped-string-tool-tag",
        "extract",
        '{"parameters": "{\\"names\\": [\\"Ann\\", \\"Bo\\"], \\"count\\": 2}</invoke>"}',
        {"names": ["Ann", "Bo"], "count": 2},
    ),
    Case(
        "json-fail-wrapped-string-cut",
        "reason",
        '{"response": "{\\"reasoning\\": \\"Simple sum.\\", \\"answer\\": ',
        error=["reasoning", "answer"],
    ),
    Case(
        "json-fail-wrapped-string-value-cut",
        "summary",
        '{"response": "{\\"summary\\": \\"The meeting was moved to Fri}"}',
        error=["summary"],
    ),
    # -- the object lost its opening brace (and first quote) -------------------------------
    Case(
        "json-headless-brace-and-quote",
        "reason",
        'reasoning": "Simple sum.", "answer": 4}',
        REASON_OK,
    ),
    Case(
        "json-headless-brace",
        "triage",
        '"category": "billing",\n  "urgency": 4,\n  "needs_human": true\n}',
        TRIAGE_OK,
    ),
    Case(
        "json-headless-nested",
        "person",
        'person": {"name": "Ann", "age": 31}}\n\nLet me know if you need more.',
        {"person": {"name": "Ann", "age": 31}},
    ),
    Case(
        "json-fail-headless-cut",
        "reason",
        'reasoning": "Simple sum.", "answer": 4',
        error=["reasoning", "answer"],
    ),
    Case(
        "json-fail-headless-key-cut",
        "reason",
        'soning": "Simple sum.", "answer": 4}',
        error=["reasoning", "answer"],
    ),
    # -- values with a remark, units, decoration ---------------------------------------------
    Case("json-value-parenthetical", "qa", '{"answer": "4 (two plus two)"}', {"answer": 4}),
    Case("json-value-units-float", "price", '{"price": "$1,299.00 USD"}', {"price": 1299.0}),
    Case("json-value-level-words", "level", '{"level": "Level 2"}', {"level": 2}),
    Case("json-value-level-bold", "level", '{"level": "**Priority 3**"}', {"level": 3}),
    Case(
        "json-value-literal-remark",
        "score",
        '{"score": 0.92, "label": "pos (the reviewer loved the battery)"}',
        {"score": 0.92, "label": "pos"},
    ),
    Case("json-fail-value-hedged-remark", "qa", '{"answer": "4 (or 5)"}', error=["answer"]),
    Case("json-fail-level-two-numbers", "level", '{"level": "Level 2 of 3"}', error=["level"]),
    Case(
        "json-fail-literal-remark-digit",
        "score",
        '{"score": 0.5, "label": "pos (3 of 5 reviews)"}',
        error=["label"],
    ),
    # -- values json-repair would invent -----------------------------------------------------
    Case("json-fail-angle-placeholder", "summary", '{"summary": <value>}', error=["summary"]),
    Case("json-fail-undefined", "summary", '{"summary": undefined}', error=["summary"]),
    Case(
        "json-fail-angle-placeholder-second",
        "address",
        '{"zip_code": "10001", "city": <city name>}',
        error=["city"],
    ),
    # -- Field: value lines in markdown -------------------------------------------------------
    Case(
        "json-labels-headings",
        "reason",
        "## Reasoning\nSimple sum.\n\n## Answer\n4",
        REASON_OK,
    ),
    # -- must fail ---------------------------------------------------------------------------
    Case(
        "json-fail-placeholder-unfilled",
        "summary",
        '```json\n{"summary": "{summary}"}\n```',
        error=["summary"],
    ),
    Case(
        "json-fail-cut-inside-list",
        "extract",
        '{"count": 2, "names": ["Al", "Bo"',
        error=["names"],
    ),
    Case(
        "json-fail-cut-after-number",
        "triage",
        '{"category": "billing", "needs_human": true, "urgency": 4',
        error=["urgency"],
    ),
    Case(
        "json-fail-stray-brace-then-cut",
        "reason",
        '{\n{"reasoning": "Simple sum.", "answer": 4',
        error=["answer"],
    ),
    Case(
        "json-fail-runaway-completes-the-answer",
        "triage",
        '{"category": "billing", "urgency": 4}\nObservation: the CRM says a human is needed.\n'
        '{"category": "billing", "urgency": 4, "needs_human": true}',
        error=["needs_human"],
    ),
    Case(
        "json-fail-truncated-string",
        "summary",
        '{"summary": "The meeting was moved to Fri',
        error=["summary"],
    ),
    Case(
        "json-fail-truncated-list",
        "extract",
        '{"names": ["Ann", "Bo", "Cy"',
        error=["names", "count"],
    ),
    Case(
        "json-fail-truncated-after-value",
        "reason",
        '{"reasoning": "Simple sum.", "answer": 4',
        error=["answer"],
    ),
    Case(
        "json-fail-truncated-in-fence",
        "triage",
        '```json\n{"category": "billing", "urgency": 4, "needs_hu',
        error=["needs_human"],
    ),
    Case("json-fail-ambiguous-int", "qa", '{"answer": "12 or 13"}', error=["answer"]),
    Case("json-fail-magnitude-suffix", "qa", '{"answer": "4k"}', error=["answer"]),
    Case("json-fail-magnitude-word", "qa", '{"answer": "4 thousand"}', error=["answer"]),
    Case("json-fail-price-millions", "price", '{"price": "1.5M"}', error=["price"]),
    Case("json-fail-price-percent", "price", '{"price": "90%"}', error=["price"]),
    Case("json-fail-bool-contradicts", "flag", '{"flag": "Yes, but no"}', error=["flag"]),
    Case("json-fail-bool-hedged", "flag", '{"flag": "true (mostly)"}', error=["flag"]),
    Case("json-fail-duplicate-key", "qa", '{"answer": 4, "answer": 5}', error=["answer"]),
    Case(
        "json-fail-duplicate-key-repaired",
        "reason",
        '{"reasoning": "Simple sum.", "answer": 4, "answer": 5,}',
        error=["answer"],
    ),
    Case(
        "json-fail-duplicate-key-nested",
        "person",
        '{"person": {"name": "Ann", "age": 34, "age": 43}}',
        error=["person"],
    ),
    Case("json-fail-ambiguous-bool", "flag", '{"flag": "yes/no"}', error=["flag"]),
    Case(
        "json-fail-two-labels",
        "triage",
        '{"category": "billing, bug", "urgency": 4, "needs_human": true}',
        error=["category"],
    ),
    Case(
        "json-fail-refusal",
        "reason",
        "I'm sorry, I can't provide that information.",
        error=["reasoning", "answer"],
    ),
    Case(
        "json-fail-refusal-single-str",
        "summary",
        "Sorry, I cannot summarize confidential text.",
        error=["summary"],
    ),
    Case("json-fail-placeholder", "qa", '{"answer": "<int>"}', error=["answer"]),
    Case("json-fail-empty", "reason", "", error=["reasoning", "answer"]),
    Case("json-fail-empty-object", "reason", "{}", error=["reasoning", "answer"]),
    Case("json-fail-missing-key", "reason", '{"reasoning": "Simple sum."}', error=["answer"]),
    Case("json-fail-null-required", "qa", '{"answer": null}', error=["answer"]),
    Case(
        "json-fail-wrong-type",
        "person",
        '{"person": {"name": "Ann", "age": "old"}}',
        error=["person"],
    ),
    Case("json-fail-plain-number-two-outputs", "reason", "42", error=["reasoning", "answer"]),
    Case(
        "json-fail-schema-only",
        "qa",
        '{"type": "object", "properties": {"answer": {"type": "integer"}}}',
        error=["answer"],
    ),
]
