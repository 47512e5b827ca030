#!/usr/bin/env bash
# Build woods's static embedding model end to end (training/static_model/README.md).
#
#   training/static_model/build.sh WORK_DIR [SEED]
#
# Needs: the corpus snapshots fetched (github:OWNER/NAME for every repository of corpus.json, in
# /work/.mirror), woods's own environment (PYTHON, default: python; it runs discovery, chunking
# and the ONNX teacher) and a training environment with `pip install .[train]` (TRAIN_PYTHON:
# model2vec + torch). Every step appends its time to WORK_DIR/build-log.jsonl; the texts and the
# teacher vectors are cached in WORK_DIR, so a second run resumes where the first stopped.
set -euo pipefail
WORK=${1:?usage: build.sh WORK_DIR [SEED]}
SEED=${2:-0}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PYTHON=${PYTHON:-python}
TRAIN_PYTHON=${TRAIN_PYTHON:-python}
OUT=${OUT:-$ROOT/woods/embedding/models/woods-static-code-v1}
export HF_HUB_OFFLINE=1 PYTHONPATH="$ROOT:$HERE"
TEACHER=$("$PYTHON" -c "from woods.embedding.encoder import minilm_model_dir; print(minilm_model_dir())")
mkdir -p "$WORK"

nice -n 10 "$PYTHON" "$HERE/texts.py" --work "$WORK" --seed "$SEED" \
  --chunks-per-language "${CHUNKS_PER_LANGUAGE:-3000}" --nl-per-language "${NL_PER_LANGUAGE:-1200}"
nice -n 10 "$PYTHON" "$HERE/teacher.py" --work "$WORK"
nice -n 10 "$PYTHON" "$HERE/vocab.py" --work "$WORK" --teacher-tokenizer "$TEACHER/tokenizer.json"
nice -n 10 "$TRAIN_PYTHON" "$HERE/distill.py" --work "$WORK" --teacher-dir "$TEACHER" \
  --vocabulary "$WORK/vocabulary.txt" --out "$WORK/distill-code" --seed "$SEED"
nice -n 10 "$TRAIN_PYTHON" "$HERE/train.py" --work "$WORK" --student "$WORK/distill-code" --split-identifiers \
  --out "$WORK/trained" --seed "$SEED"
"$PYTHON" "$HERE/export.py" --work "$WORK" --trained "$WORK/trained" --teacher-dir "$TEACHER" \
  --split-identifiers --out "$OUT" --seed "$SEED"
"$PYTHON" "$HERE/agreement.py" --work "$WORK" --model "$OUT"
