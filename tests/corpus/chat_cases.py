"""Corpus: completions answering a ChatAdapter prompt, as real models write them."""

from __future__ import annotations

from tests.corpus.case import Case

TRIAGE_OK = {"category": "billing", "urgency": 4, "needs_human": True}

CHAT_CASES = [
    # -- well-formed -------------------------------------------------------------------------
    Case(
        "chat-ok-reason",
        "reason",
        "[[ ## reasoning ## ]]\n2 and 2 make 4.\n\n[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]",
        {"reasoning": "2 and 2 make 4.", "answer": 4},
    ),
    Case(
        "chat-ok-triage",
        "triage",
        "[[ ## category ## ]]\nbilling\n\n[[ ## urgency ## ]]\n4\n\n[[ ## needs_human ## ]]\nTrue\n\n"
        "[[ ## completed ## ]]\n",
        TRIAGE_OK,
    ),
    Case(
        "chat-ok-person",
        "person",
        '[[ ## person ## ]]\n{"name": "Ann Lee", "age": 34}\n\n[[ ## completed ## ]]',
        {"person": {"name": "Ann Lee", "age": 34}},
    ),
    Case(
        "chat-ok-multiline-summary",
        "summary",
        "[[ ## summary ## ]]\nThe meeting moved to Friday.\n\nBudget approved.\n\n[[ ## completed ## ]]",
        {"summary": "The meeting moved to Friday.\n\nBudget approved."},
    ),
    Case(
        "chat-ok-people",
        "people",
        '[[ ## people ## ]]\n[{"name": "Al", "age": 3}, {"name": "Bo", "age": 5}]\n\n[[ ## completed ## ]]',
        {"people": [{"name": "Al", "age": 3}, {"name": "Bo", "age": 5}]},
    ),
    # -- decorated markers ---------------------------------------------------------------------
    Case(
        "chat-bold-markers",
        "reason",
        "**[[ ## reasoning ## ]]**\nSimple sum.\n\n**[[ ## answer ## ]]**\n4\n\n**[[ ## completed ## ]]**",
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-heading-markers",
        "reason",
        "### [[ ## reasoning ## ]]\nSimple sum.\n\n### [[ ## answer ## ]]\n4\n\n### [[ ## completed ## ]]",
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-backtick-markers",
        "reason",
        "`[[ ## reasoning ## ]]`\nSimple sum.\n`[[ ## answer ## ]]`\n4\n`[[ ## completed ## ]]`",
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-drifted-spacing",
        "reason",
        "[[## reasoning ##]]\nSimple sum.\n[[##answer##]]\n4\n[[## completed ##]]",
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-drifted-case",
        "reason",
        "[[ ## Reasoning ## ]]\nSimple sum.\n\n[[ ## ANSWER ## ]]\n4\n\n[[ ## Completed ## ]]",
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-spaces-for-underscores",
        "needs",
        "[[ ## needs human ## ]]\nyes\n\n[[ ## reason text ## ]]\nAngry customer.\n\n[[ ## completed ## ]]",
        {"needs_human": True, "reason_text": "Angry customer."},
    ),
    Case(
        "chat-hyphens-for-underscores",
        "needs",
        "[[ ## needs-human ## ]]\nno\n\n[[ ## reason-text ## ]]\nRoutine.\n\n[[ ## completed ## ]]",
        {"needs_human": False, "reason_text": "Routine."},
    ),
    Case(
        "chat-marker-with-colon",
        "reason",
        "[[ ## reasoning ## ]]: Simple sum.\n[[ ## answer ## ]]: 4\n[[ ## completed ## ]]",
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-indented-markers",
        "reason",
        "    [[ ## reasoning ## ]]\n    Simple sum.\n    [[ ## answer ## ]]   4\n    [[ ## completed ## ]]",
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-glued-marker",
        "reason",
        "[[ ## reasoning ## ]]\nIt is a simple sum.[[ ## answer ## ]]\n4\n[[ ## completed ## ]]",
        {"reasoning": "It is a simple sum.", "answer": 4},
    ),
    Case(
        "chat-several-markers-one-line",
        "reason",
        "[[ ## reasoning ## ]] simple sum [[ ## answer ## ]] 4 [[ ## completed ## ]]",
        {"reasoning": "simple sum", "answer": 4},
    ),
    Case(
        "chat-all-on-one-line-triage",
        "triage",
        "[[ ## category ## ]] bug [[ ## urgency ## ]] 2 [[ ## needs_human ## ]] False",
        {"category": "bug", "urgency": 2, "needs_human": False},
    ),
    Case(
        "chat-bold-and-colon",
        "triage",
        "**[[ ## category ## ]]:** billing\n**[[ ## urgency ## ]]:** 4\n**[[ ## needs_human ## ]]:** True",
        TRIAGE_OK,
    ),
    Case(
        "chat-marker-mentioned-in-sentence",
        "reason",
        "[[ ## reasoning ## ]]\nI will put the number in the [[ ## answer ## ]] field as asked.\n"
        "The sum is four.\n\n[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]",
        {
            "reasoning": "I will put the number in the [[ ## answer ## ]] field as asked.\nThe sum is four.",
            "answer": 4,
        },
    ),
    Case(
        "chat-mention-does-not-split-summary",
        "summary",
        "[[ ## summary ## ]]\nThe doc explains how [[ ## completed ## ]] markers end a reply in DSPy.",
        {"summary": "The doc explains how [[ ## completed ## ]] markers end a reply in DSPy."},
    ),
    # -- surrounding text and structure ----------------------------------------------------
    Case(
        "chat-no-completed-marker",
        "triage",
        "[[ ## category ## ]]\nbilling\n[[ ## urgency ## ]]\n4\n[[ ## needs_human ## ]]\nTrue",
        TRIAGE_OK,
    ),
    Case(
        "chat-preamble",
        "reason",
        "Sure! Here is my answer.\n\n[[ ## reasoning ## ]]\nSimple sum.\n\n[[ ## answer ## ]]\n4",
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-trailing-text",
        "reason",
        "[[ ## reasoning ## ]]\nSimple sum.\n[[ ## answer ## ]]\n4\n[[ ## completed ## ]]\n\nLet me know if you need more!",
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-think-block",
        "reason",
        "<think>\nMaybe 5? [[ ## answer ## ]]\n5\nNo wait, it is 4.\n</think>\n[[ ## reasoning ## ]]\nSimple sum.\n"
        "[[ ## answer ## ]]\n4\n[[ ## completed ## ]]",
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-think-orphan-close",
        "qa",
        "Let me count: 2, then 2 more... that is 4.\n</think>\n\n[[ ## answer ## ]]\n4",
        {"answer": 4},
    ),
    Case(
        "chat-thinking-tag",
        "triage",
        "<thinking>Probably a bug? No, it is a double charge.</thinking>\n"
        "[[ ## category ## ]]\nbilling\n[[ ## urgency ## ]]\n4\n[[ ## needs_human ## ]]\nTrue",
        TRIAGE_OK,
    ),
    Case(
        "chat-echoed-inputs",
        "reason",
        "[[ ## question ## ]]\nWhat is 2+2?\n\n[[ ## reasoning ## ]]\nSimple sum.\n\n[[ ## answer ## ]]\n4\n\n"
        "[[ ## completed ## ]]",
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-echoed-input-with-numbers",
        "qa",
        "[[ ## question ## ]]\nWhat is 17 + 25?\n\n[[ ## answer ## ]]\n42",
        {"answer": 42},
    ),
    Case(
        "chat-echoed-template",
        "triage",
        "[[ ## category ## ]]\n{category}        # note: the value you produce must exactly match (no extra "
        "characters) one of: billing; bug; other\n\n[[ ## urgency ## ]]\n{urgency}\n\n[[ ## needs_human ## ]]\n"
        "{needs_human}\n\n[[ ## category ## ]]\nbilling\n\n[[ ## urgency ## ]]\n4\n\n[[ ## needs_human ## ]]\nTrue",
        TRIAGE_OK,
    ),
    Case(
        "chat-runaway-after-completed",
        "reason",
        "[[ ## reasoning ## ]]\nSimple sum.\n\n[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]\n\n"
        "[[ ## question ## ]]\nWhat is 3+3?\n\n[[ ## reasoning ## ]]\nAnother sum.\n\n[[ ## answer ## ]]\n6",
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-runaway-fills-nothing-missing",
        "qa",
        "[[ ## completed ## ]]\n[[ ## answer ## ]]\n7",
        {"answer": 7},
    ),
    Case(
        "chat-unknown-header-ends-section",
        "reason",
        "[[ ## reasoning ## ]]\nSimple sum.\n[[ ## confidence ## ]]\nhigh\n[[ ## answer ## ]]\n4",
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-duplicate-same-value",
        "qa",
        "[[ ## answer ## ]]\n4\n\n[[ ## answer ## ]]\n4 \n\n[[ ## completed ## ]]",
        {"answer": 4},
    ),
    Case(
        "chat-whole-answer-fenced",
        "reason",
        "```\n[[ ## reasoning ## ]]\nSimple sum.\n\n[[ ## answer ## ]]\n4\n\n[[ ## completed ## ]]\n```",
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-fence-after-prose",
        "triage",
        "Here you go:\n```text\n[[ ## category ## ]]\nbilling\n[[ ## urgency ## ]]\n4\n[[ ## needs_human ## ]]\nTrue\n```",
        TRIAGE_OK,
    ),
    Case(
        "chat-fenced-code-kept-in-str",
        "summary",
        "[[ ## summary ## ]]\nUse this:\n```python\nprint('hi')\n```\n\n[[ ## completed ## ]]",
        {"summary": "Use this:\n```python\nprint('hi')\n```"},
    ),
    # -- other shapes ---------------------------------------------------------------------------
    Case(
        "chat-json-instead-of-sections",
        "triage",
        '{"category": "billing", "urgency": 4, "needs_human": true}',
        TRIAGE_OK,
    ),
    Case(
        "chat-fenced-json-instead",
        "reason",
        '```json\n{"reasoning": "Simple sum.", "answer": 4}\n```',
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-json-with-prose",
        "person",
        'The person mentioned is: {"person": {"name": "Ann", "age": 34}}. Hope that helps!',
        {"person": {"name": "Ann", "age": 34}},
    ),
    Case(
        "chat-field-value-lines",
        "triage",
        "Category: billing\nUrgency: 4\nNeeds human: yes",
        TRIAGE_OK,
    ),
    Case(
        "chat-bold-field-value-lines",
        "reason",
        "**Reasoning:** It is a simple sum,\nnothing more.\n**Answer:** 4",
        {"reasoning": "It is a simple sum,\nnothing more.", "answer": 4},
    ),
    Case(
        "chat-field-value-lines-snake",
        "needs",
        "needs_human: false\nreason_text: The user only asked about hours.",
        {"needs_human": False, "reason_text": "The user only asked about hours."},
    ),
    Case("chat-bare-int", "qa", "42", {"answer": 42}),
    Case("chat-bare-int-sentence", "qa", "The answer is 42.", {"answer": 42}),
    Case("chat-bare-bool", "flag", "Yes.", {"flag": True}),
    Case("chat-bare-color", "color", "**Blue**", {"color": "blue"}),
    Case(
        "chat-bare-list", "tags", "- urgent\n- refund\n- vip", {"tags": ["urgent", "refund", "vip"]}
    ),
    # -- typed values ------------------------------------------------------------------------
    Case("chat-int-with-label", "qa", "[[ ## answer ## ]]\nAnswer: 42", {"answer": 42}),
    Case("chat-int-bold", "qa", "[[ ## answer ## ]]\n**7**", {"answer": 7}),
    Case("chat-int-with-unit", "qa", "[[ ## answer ## ]]\n30 items", {"answer": 30}),
    Case("chat-int-thousands", "qa", "[[ ## answer ## ]]\n1,234", {"answer": 1234}),
    Case("chat-int-float-text", "qa", "[[ ## answer ## ]]\n42.0", {"answer": 42}),
    Case("chat-int-trailing-period", "qa", "[[ ## answer ## ]]\n42.", {"answer": 42}),
    Case("chat-price-currency", "price", "[[ ## price ## ]]\n$1,234.50", {"price": 1234.5}),
    Case("chat-price-currency-after", "price", "[[ ## price ## ]]\n19.99 USD", {"price": 19.99}),
    Case("chat-price-euro", "price", "[[ ## price ## ]]\n€ 12", {"price": 12.0}),
    Case("chat-negative-number", "qa", "[[ ## answer ## ]]\n-3", {"answer": -3}),
    Case("chat-int-exponent", "qa", "[[ ## answer ## ]]\n4e3", {"answer": 4000}),
    Case(
        "chat-bool-remark-agrees",
        "flag",
        "[[ ## flag ## ]]\nNo, there is no refund on file.",
        {"flag": False},
    ),
    Case(
        "chat-bool-yes-reason",
        "flag",
        "[[ ## flag ## ]]\nYes, the customer asked twice.",
        {"flag": True},
    ),
    Case("chat-bool-no-period", "flag", "[[ ## flag ## ]]\nNo.", {"flag": False}),
    Case("chat-bool-upper", "flag", "[[ ## flag ## ]]\nTRUE", {"flag": True}),
    Case("chat-bool-bold", "flag", "[[ ## flag ## ]]\n**false**", {"flag": False}),
    Case(
        "chat-literal-case",
        "triage",
        "[[ ## category ## ]]\nBilling\n[[ ## urgency ## ]]\n4\n[[ ## needs_human ## ]]\nTrue",
        TRIAGE_OK,
    ),
    Case(
        "chat-literal-quoted-bold",
        "triage",
        "[[ ## category ## ]]\n**'billing'**\n[[ ## urgency ## ]]\n4\n[[ ## needs_human ## ]]\nyes",
        TRIAGE_OK,
    ),
    Case(
        "chat-literal-trailing-period",
        "triage",
        "[[ ## category ## ]]\nbilling.\n[[ ## urgency ## ]]\n4\n[[ ## needs_human ## ]]\nTrue",
        TRIAGE_OK,
    ),
    Case(
        "chat-literal-wrapped",
        "triage",
        "[[ ## category ## ]]\nLiteral['billing']\n[[ ## urgency ## ]]\n4\n[[ ## needs_human ## ]]\nTrue",
        TRIAGE_OK,
    ),
    Case("chat-numeric-literal-string", "level", "[[ ## level ## ]]\n2", {"level": 2}),
    Case("chat-numeric-literal-quoted", "level", "[[ ## level ## ]]\n'3'", {"level": 3}),
    Case("chat-enum-value", "color", "[[ ## color ## ]]\nred", {"color": "red"}),
    Case("chat-enum-name", "color", "[[ ## color ## ]]\nGREEN", {"color": "green"}),
    Case("chat-enum-dotted", "color", "[[ ## color ## ]]\nColor.BLUE", {"color": "blue"}),
    Case("chat-enum-backticks", "color", "[[ ## color ## ]]\n`red`", {"color": "red"}),
    Case(
        "chat-list-bullets",
        "tags",
        "[[ ## tags ## ]]\n- urgent\n- refund",
        {"tags": ["urgent", "refund"]},
    ),
    Case(
        "chat-list-stars",
        "tags",
        "[[ ## tags ## ]]\n* urgent\n* refund",
        {"tags": ["urgent", "refund"]},
    ),
    Case(
        "chat-list-numbered",
        "extract",
        "[[ ## names ## ]]\n1. Ann\n2. Bo\n3. Cy\n\n[[ ## count ## ]]\n3",
        {"names": ["Ann", "Bo", "Cy"], "count": 3},
    ),
    Case(  # unmarked text: `Sorry, no` would be two items too; only bullets mark a list
        "chat-list-commas",
        "tags",
        "[[ ## tags ## ]]\nurgent, refund, vip",
        error=["tags"],
    ),
    Case(
        "chat-list-bullets-tags",
        "tags",
        "[[ ## tags ## ]]\n- urgent\n- refund\n- vip",
        {"tags": ["urgent", "refund", "vip"]},
    ),
    Case(
        "chat-list-python",
        "tags",
        "[[ ## tags ## ]]\n['urgent', 'refund']",
        {"tags": ["urgent", "refund"]},
    ),
    Case(
        "chat-list-json",
        "tags",
        '[[ ## tags ## ]]\n["urgent", "refund"]',
        {"tags": ["urgent", "refund"]},
    ),
    Case(
        "chat-list-fenced-json",
        "tags",
        '[[ ## tags ## ]]\n```json\n["urgent", "refund"]\n```',
        {"tags": ["urgent", "refund"]},
    ),
    Case(
        "chat-model-python-dict",
        "person",
        "[[ ## person ## ]]\n{'name': 'Ann', 'age': 34}",
        {"person": {"name": "Ann", "age": 34}},
    ),
    Case(
        "chat-model-repr",
        "person",
        "[[ ## person ## ]]\nPerson(name='Ann', age=34)",
        {"person": {"name": "Ann", "age": 34}},
    ),
    Case(
        "chat-dict-python",
        "counts",
        "[[ ## counts ## ]]\n{'a': 1, 'b': 2}",
        {"counts": {"a": 1, "b": 2}},
    ),
    Case(
        "chat-optional-none",
        "optional",
        "[[ ## maybe ## ]]\nNone\n\n[[ ## note ## ]]\nnothing to add",
        {"maybe": None, "note": "nothing to add"},
    ),
    Case(
        "chat-optional-null-and-omitted",
        "optional",
        "[[ ## maybe ## ]]\nnull",
        {"maybe": None, "note": None},
    ),
    Case(
        "chat-str-verbatim-zip",
        "address",
        "[[ ## zip_code ## ]]\n02139\n\n[[ ## city ## ]]\nCambridge",
        {"zip_code": "02139", "city": "Cambridge"},
    ),
    Case(
        "chat-str-none-is-text",
        "address",
        "[[ ## zip_code ## ]]\nNone\n\n[[ ## city ## ]]\nNone",
        {"zip_code": "None", "city": "None"},
    ),
    # -- Field: value lines in markdown, label drift ------------------------------------------
    Case(
        "chat-labels-dash",
        "reason",
        "REASONING - Two plus two.\nANSWER - 4",
        {"reasoning": "Two plus two.", "answer": 4},
    ),
    Case(
        "chat-labels-headings",
        "reason",
        "### Reasoning\nSimple sum.\n\n### Answer\n4",
        {"reasoning": "Simple sum.", "answer": 4},
    ),
    Case(
        "chat-labels-bold-alone",
        "triage",
        "**Category**\nbilling\n\n**Urgency**\n4\n\n**Needs human**\nyes",
        {"category": "billing", "urgency": 4, "needs_human": True},
    ),
    Case(
        "chat-labels-numbered-drift",
        "triage",
        "1. **CATEGORY**: billing\n2. urgency = 4\n3. Needs-Human \u2014 yes",
        {"category": "billing", "urgency": 4, "needs_human": True},
    ),
    Case(
        "chat-labels-one-unlabelled-line",
        "triage",
        "billing\n**Urgency:** 4\n**Needs human:** yes",
        {"category": "billing", "urgency": 4, "needs_human": True},
    ),
    Case(
        "chat-fail-labels-unlabelled-prose",
        "triage",
        "Here is my triage:\n**Urgency:** 4\n**Needs human:** yes",
        error=["category"],
    ),
    Case(
        "chat-fail-labels-two-candidate-lines",
        "triage",
        "Here is my triage:\nbilling\n**Urgency:** 4\n**Needs human:** yes",
        error=["category", "urgency", "needs_human"],
    ),
    Case(
        "chat-fail-labels-text-output-unlabelled",
        "reason",
        "Simple sum.\n**Answer:** 4",
        error=["reasoning", "answer"],
    ),
    # -- a value with a remark after it ------------------------------------------------------
    Case(
        "chat-value-parenthetical",
        "qa",
        "[[ ## answer ## ]]\n4 (two plus two)\n\n[[ ## completed ## ]]",
        {"answer": 4},
    ),
    Case(
        "chat-value-trailing-sentence",
        "qa",
        "[[ ## answer ## ]]\n4. Two plus two is four.\n\n[[ ## completed ## ]]",
        {"answer": 4},
    ),
    Case(
        "chat-value-dash-remark",
        "triage",
        "[[ ## category ## ]]\nbilling \u2014 a double charge\n\n[[ ## urgency ## ]]\n4 (high)"
        "\n\n[[ ## needs_human ## ]]\nyes\n\n[[ ## completed ## ]]",
        {"category": "billing", "urgency": 4, "needs_human": True},
    ),
    Case(
        "chat-fail-value-remark-hedge",
        "qa",
        "[[ ## answer ## ]]\n4, maybe 5\n\n[[ ## completed ## ]]",
        error=["answer"],
    ),
    Case(
        "chat-fail-value-remark-correction",
        "qa",
        "[[ ## answer ## ]]\n4. Actually, it is 5.\n\n[[ ## completed ## ]]",
        error=["answer"],
    ),
    Case(
        "chat-fail-value-remark-approx",
        "qa",
        "[[ ## answer ## ]]\n40 (approximately)\n\n[[ ## completed ## ]]",
        error=["answer"],
    ),
    # -- a label stated once, emphasized, at the end of prose -----------------------------------
    Case(
        "chat-literal-end-of-prose",
        "score",
        "[[ ## score ## ]]\n0.9\n\n[[ ## label ## ]]\nThe reviewer praises the battery and the "
        "screen, so the label is **pos**.\n\n[[ ## completed ## ]]",
        {"score": 0.9, "label": "pos"},
    ),
    Case(
        "chat-enum-end-of-prose",
        "color",
        "[[ ## color ## ]]\nThe text describes the sky at noon, which is `blue`.\n\n"
        "[[ ## completed ## ]]",
        {"color": "blue"},
    ),
    Case(
        "chat-fail-literal-prose-both",
        "score",
        "[[ ## score ## ]]\n0.5\n\n[[ ## label ## ]]\nIt is not neg; I would call it **pos**.\n\n"
        "[[ ## completed ## ]]",
        error=["label"],
    ),
    Case(
        "chat-fail-literal-prose-negated",
        "score",
        "[[ ## score ## ]]\n0.5\n\n[[ ## label ## ]]\nThe review is mixed, so it is not **pos**."
        "\n\n[[ ## completed ## ]]",
        error=["label"],
    ),
    Case(
        "chat-fail-enum-prose-hedged",
        "color",
        "[[ ## color ## ]]\nHard to say from this text. Maybe **red**.\n\n[[ ## completed ## ]]",
        error=["color"],
    ),
    # -- the template echoed unfilled before the answer ---------------------------------------
    Case(
        "chat-template-echoed-then-answer",
        "reason",
        "[[ ## reasoning ## ]]\n{reasoning}\n\n[[ ## answer ## ]]\n{answer}\n\n"
        "[[ ## completed ## ]]\n\n[[ ## reasoning ## ]]\nTwo plus two.\n\n[[ ## answer ## ]]\n4"
        "\n\n[[ ## completed ## ]]",
        {"reasoning": "Two plus two.", "answer": 4},
    ),
    Case(
        "chat-template-echoed-prose-then-answer",
        "triage",
        "[[ ## category ## ]]\n{category}\n[[ ## urgency ## ]]\n{urgency}\n[[ ## needs_human ## ]]"
        "\n{needs_human}\n\nFilled in:\n\n[[ ## category ## ]]\nbug\n\n[[ ## urgency ## ]]\n2\n\n"
        "[[ ## needs_human ## ]]\nno\n\n[[ ## completed ## ]]",
        {"category": "bug", "urgency": 2, "needs_human": False},
    ),
    Case(
        "chat-fail-template-echoed-only",
        "reason",
        "[[ ## reasoning ## ]]\n{reasoning}\n\n[[ ## answer ## ]]\n{answer}\n\n[[ ## completed ## ]]",
        error=["reasoning", "answer"],
    ),
    # -- must fail ---------------------------------------------------------------------------
    Case("chat-fail-ambiguous-or", "qa", "[[ ## answer ## ]]\n12 or 13", error=["answer"]),
    Case(
        "chat-fail-ambiguous-range", "qa", "[[ ## answer ## ]]\nbetween 40 and 50", error=["answer"]
    ),
    Case("chat-fail-words-number", "qa", "[[ ## answer ## ]]\nforty-two", error=["answer"]),
    Case("chat-fail-yes-slash-no", "flag", "[[ ## flag ## ]]\nyes/no", error=["flag"]),
    Case(
        "chat-fail-yes-or-no", "flag", "[[ ## flag ## ]]\nYes or no, hard to say.", error=["flag"]
    ),
    Case("chat-fail-maybe", "flag", "[[ ## flag ## ]]\nMaybe", error=["flag"]),
    Case(
        "chat-fail-two-labels",
        "triage",
        "[[ ## category ## ]]\nbilling or bug\n[[ ## urgency ## ]]\n4\n[[ ## needs_human ## ]]\nTrue",
        error=["category"],
    ),
    Case(
        "chat-fail-negated-label",
        "triage",
        "[[ ## category ## ]]\nnot billing\n[[ ## urgency ## ]]\n4\n[[ ## needs_human ## ]]\nTrue",
        error=["category"],
    ),
    Case(
        "chat-fail-refusal",
        "qa",
        "I'm sorry, but I can't help with that request.",
        error=["answer"],
    ),
    Case(
        "chat-fail-refusal-two-outputs",
        "reason",
        "I cannot answer this question.",
        error=["reasoning", "answer"],
    ),
    Case(
        "chat-fail-refusal-in-section",
        "qa",
        "[[ ## answer ## ]]\nI can't determine that from the 2 sources given.",
        error=["answer"],
    ),
    Case("chat-fail-placeholder-only", "qa", "[[ ## answer ## ]]\n{answer}", error=["answer"]),
    Case(
        "chat-fail-template-echo-only",
        "reason",
        "[[ ## reasoning ## ]]\n{reasoning}\n\n[[ ## answer ## ]]\n{answer}        # note: the value you produce "
        "must be a single int value\n\n[[ ## completed ## ]]",
        error=["reasoning", "answer"],
    ),
    Case("chat-fail-empty", "qa", "", error=["answer"]),
    Case("chat-fail-whitespace", "reason", "   \n\n  ", error=["reasoning", "answer"]),
    Case(
        "chat-fail-missing-field", "reason", "[[ ## reasoning ## ]]\nSimple sum.", error=["answer"]
    ),
    Case(
        "chat-fail-missing-required-triage",
        "triage",
        "[[ ## category ## ]]\nbilling\n\n[[ ## completed ## ]]",
        error=["urgency", "needs_human"],
    ),
    Case("chat-fail-truncated-list", "tags", '[[ ## tags ## ]]\n["urgent", "ref', error=["tags"]),
    Case(
        "chat-fail-truncated-model",
        "person",
        '[[ ## person ## ]]\n{"name": "Ann", "age": 3',
        error=["person"],
    ),
    Case(
        "chat-fail-unfinished-think",
        "qa",
        "<think>\nThe answer is probably 4, let me check",
        error=["answer"],
    ),
    Case(
        "chat-fail-bare-str-output", "summary", "I'd rather not summarize this.", error=["summary"]
    ),
    Case("chat-fail-two-numbers-price", "price", "[[ ## price ## ]]\n$10 or $12", error=["price"]),
    Case("chat-fail-approximate", "qa", "[[ ## answer ## ]]\n~40", error=["answer"]),
    # -- a number without its magnitude, a hedged yes/no, an output written twice ----------
    Case("chat-fail-magnitude-word", "qa", "[[ ## answer ## ]]\n4 million", error=["answer"]),
    Case("chat-fail-magnitude-suffix", "qa", "[[ ## answer ## ]]\n4k", error=["answer"]),
    Case("chat-fail-dozen", "qa", "[[ ## answer ## ]]\n2 dozen", error=["answer"]),
    Case("chat-fail-multiple", "qa", "[[ ## answer ## ]]\n4x", error=["answer"]),
    Case("chat-fail-bare-exponent", "qa", "[[ ## answer ## ]]\n4e", error=["answer"]),
    Case("chat-fail-or-more", "qa", "[[ ## answer ## ]]\n4 or more", error=["answer"]),
    Case(
        "chat-fail-magnitude-remark", "qa", "[[ ## answer ## ]]\n4 (in thousands)", error=["answer"]
    ),
    Case("chat-fail-price-millions", "price", "[[ ## price ## ]]\n1.5M", error=["price"]),
    Case("chat-fail-price-percent", "price", "[[ ## price ## ]]\n90%", error=["price"]),
    Case("chat-fail-bool-yes-then-no", "flag", "[[ ## flag ## ]]\nyes; no", error=["flag"]),
    Case("chat-fail-bool-but", "flag", "[[ ## flag ## ]]\nYes, but no", error=["flag"]),
    Case("chat-fail-bool-dash-other", "flag", "[[ ## flag ## ]]\nno - yes", error=["flag"]),
    Case("chat-fail-bool-mostly", "flag", "[[ ## flag ## ]]\ntrue (mostly)", error=["flag"]),
    Case(
        "chat-fail-duplicate-two-values",
        "qa",
        "[[ ## answer ## ]]\n4\n\n[[ ## answer ## ]]\n5\n\n[[ ## completed ## ]]",
        error=["answer"],
    ),
    Case(
        "chat-fail-duplicate-label-two-values",
        "reason",
        "Reasoning: Simple sum.\nAnswer: 4\nAnswer: 5",
        error=["answer"],
    ),
    Case("chat-fail-unknown-color", "color", "[[ ## color ## ]]\npurple", error=["color"]),
]
