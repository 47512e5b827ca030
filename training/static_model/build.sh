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
  --chunks-per-language "${CHUNKS_PER_LANGUAGE:-800}" --nl-per-language "${NL_PER_LANGUAGE:-300}"
# The long step. EMBEDDED_ONLY=1 with TEACHER_SECONDS set stops it there and trains on what it embedded.
if [ -n "${TEACHER_SECONDS:-}" ]; then
  timeout "$TEACHER_SECONDS" nice -n 10 "$PYTHON" "$HERE/teacher.py" --work "$WORK" || true
else
  nice -n 10 "$PYTHON" "$HERE/teacher.py" --work "$WORK"
fi
# The measured best design (README "Design steps"): MiniLM's own vocabulary, identifiers not split.
# CODE_VOCABULARY=1 adds the mined code words and the identifier split (measured worse so far).
if [ "${CODE_VOCABULARY:-0}" = 1 ]; then
  nice -n 10 "$PYTHON" "$HERE/vocab.py" --work "$WORK" --teacher-tokenizer "$TEACHER/tokenizer.json"
  VOCAB=(--vocabulary "$WORK/vocabulary.txt"); SPLIT=(--split-identifiers)
else
  VOCAB=(); SPLIT=()
fi
nice -n 10 "$TRAIN_PYTHON" "$HERE/distill.py" --work "$WORK" --teacher-dir "$TEACHER" "${VOCAB[@]}" \
  --out "$WORK/distilled" --seed "$SEED"
nice -n 10 "$TRAIN_PYTHON" "$HERE/train.py" --work "$WORK" --student "$WORK/distilled" "${SPLIT[@]}" \
  --out "$WORK/trained" --seed "$SEED" --epochs "${EPOCHS:-6}" ${EMBEDDED_ONLY:+--embedded-only}
"$PYTHON" "$HERE/export.py" --work "$WORK" --trained "$WORK/trained" --teacher-dir "$TEACHER" \
  "${SPLIT[@]}" --out "$OUT" --seed "$SEED"
"$PYTHON" "$HERE/agreement.py" --work "$WORK" --model "$OUT"
