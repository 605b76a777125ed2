#!/usr/bin/env bash
# The checks that need a GPU, in one run, for a machine with CUDA (CI has none).
#
#   OUT=some/dir tools/gpu_checks.sh [PYTEST-ARGS]   (default: -k cuda)
#
# Writes to $OUT: verify.json and verification.md (`torchcopy-lint verify` on every device
# present: cpu and cuda), cuda-tests.xml and pytest.log (every test with a CUDA variant:
# the sanitizer's, the torch API tables', verify's), environment.txt. Copy verification.md to
# docs/verification.md when it was made on a machine with CUDA.
# Where LibCST is not installed, put its wheel (and pathspec's) in .whl/ first: they are
# installed into a private folder, nothing else is touched.
set -u
OUT=${OUT:?set OUT to the folder for the results}
export PYTHONUNBUFFERED=1
if ! python3 -c "import libcst, pathspec" 2>/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/tcl-site .whl/*.whl || exit 2
    export PYTHONPATH=/tmp/tcl-site
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
jobs=$(python3 -c "import os; print(min(8, os.cpu_count() or 1))")

{
    date -u
    nvidia-smi -L 2>&1
    python3 -c "import sys, torch; print('python', sys.version.split()[0]); print('torch', torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available())"
} > "$OUT/environment.txt" 2>&1
cat "$OUT/environment.txt"

start=$SECONDS
python3 -m torchcopy_lint verify --format json -j "$jobs" > "$OUT/verify.json"
echo "verify: exit $? in $((SECONDS - start)) s"
python3 - "$OUT/verify.json" > "$OUT/verification.md" <<'EOF'
import json, sys
from torchcopy_lint.runtime.report import render_markdown, render_text
document = json.load(open(sys.argv[1], encoding="utf-8"))
sys.stderr.write(render_text(document))
sys.stdout.write(render_markdown(document))
EOF

# pytest arguments: the script's own, else every test with a CUDA variant (-k cuda)
selection=("$@")
[ ${#selection[@]} -eq 0 ] && selection=(-k cuda)
parallel=()
python3 -c "import xdist" 2>/dev/null && parallel=(-n "$jobs")
start=$SECONDS
python3 -m pytest -q -rs -p no:cacheprovider "${parallel[@]}" "${selection[@]}" \
    tests/test_sanitizer.py tests/test_torch_api.py tests/test_verify.py \
    --junitxml="$OUT/cuda-tests.xml" > "$OUT/pytest.log" 2>&1
echo "pytest ${selection[*]}: exit $? in $((SECONDS - start)) s"
tail -25 "$OUT/pytest.log"
