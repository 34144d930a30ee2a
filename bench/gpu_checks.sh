#!/bin/bash
# Every check that needs a CUDA GPU, in one run (from the repository root). Each prints what it measured; the output
# of all of them goes to stdout and to gpu-checks-<host>.log. Order: correctness first, then speed.
set -u
log="gpu-checks-$(hostname).log"
{
  nvidia-smi --query-gpu=name,memory.total --format=csv
  python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  python bench/device_check.py                                                  # GPU vs CPU float64, every quantity
  # captured step (issue 38 rows; Adam / AdamW, bf16, conv + BN, resume, cuda:1 when there are 2 GPUs), sync-free step
  nbdev_test --flags gpu --path nbs/12_learner.ipynb && echo "12_learner gpu tests: ok"
  nbdev_test --flags gpu --path nbs/14_device_check.ipynb && echo "14_device_check gpu tests: ok"
  nbdev_test --flags gpu --path nbs/02c_local.ipynb && echo "02c_local gpu tests (local margin on the device): ok"
  python bench/regularizers.py --device cuda --resnet full --bf16 --graph --reps 15        # Table VI on the GPU
  python bench/grid_throughput.py --device cuda --jobs 1 8 16                               # grids on one GPU
  python bench/grid_throughput.py --device cuda --jobs 1 8 16 --cuda-graph
} 2>&1 | tee "$log"
