#!/bin/bash
# Label confidence on the real local model, and the evaluation report of it.
#
# The real instruction-tuned model of real_model.py (Qwen2.5-Coder-1.5B-Instruct, served by
# llama-cpp-python, whose chat answers carry log probabilities in the legacy completions
# shape) classifies the 20 product reviews of real_model_data.py through `structio run
# --confidence`: the sentiment as two options (real_model.py's signature), then as three
# (`neutral` added, which no review is). `structio eval` scores both prediction files side
# by side against the labels: accuracy, the confusion, expected calibration error, the
# reliability bins; with --html, the report in the picture of docs/how-to/evaluation.md
# (python scripts/report_screenshot.py --page OUT/report.html).
#
#   bash benchmarks/real_model_setup.sh   # once: the model and its server (../shared/realmodel)
#   bash benchmarks/confidence_real.sh [OUT_DIR] [BASE_URL]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-/tmp/structio-confidence}
BASE=${2:-http://127.0.0.1:8765/v1}
mkdir -p "$OUT"
cd "$HERE"
python - "$OUT/reviews.jsonl" <<'PY'
import json, sys
from real_model_data import REVIEWS
with open(sys.argv[1], "w", encoding="utf-8") as out:
    for review, sentiment in REVIEWS:
        out.write(json.dumps({"review": review, "sentiment": sentiment}) + "\n")
PY
for sig in Sentiment Sentiment3; do
  python -m structio run "confidence_signatures.py:$sig" "$OUT/reviews.jsonl" \
    -o "$OUT/$sig.jsonl" --model openai/qwen2.5-coder-1.5b-instruct --api-base "$BASE" \
    --api-key local --server llamacpp --temperature 0 --no-cache --concurrency 1 --confidence
done
python -m structio eval "$OUT/reviews.jsonl" "$OUT/Sentiment.jsonl" "$OUT/Sentiment3.jsonl" \
  --sig confidence_signatures.py:Sentiment3 --html "$OUT/report.html"
python -m structio eval "$OUT/reviews.jsonl" "$OUT/Sentiment.jsonl" "$OUT/Sentiment3.jsonl" \
  --sig confidence_signatures.py:Sentiment3 --json > "$OUT/scores.json"
