"""Diagnostic for the GPU runner: does an argument error raised inside libgpuprim reach Python as
an exception, in a fresh process (`fresh`), after CUDA work (`after_cuda`), and after a CUDA graph
capture (`after_graph`)? Prints 'probe <mode>: ok' or dies; the runner reports which.

    python3 scripts/exception_probe.py fresh|after_cuda|after_graph
"""
import sys

import torch

import gpuprim

mode = sys.argv[1]
if mode in ("after_cuda", "after_graph"):
    x = torch.randn(1000, device="cuda")
    gpuprim.cumsum(x)
    torch.cuda.synchronize()
if mode == "after_graph":
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        gpuprim.cumsum(x)
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(graph):
        y = gpuprim.cumsum(x)
    graph.replay()
    torch.cuda.synchronize()
    del graph, y
try:
    gpuprim.cumsum(torch.zeros(3), 5)
except IndexError as error:
    print(f"probe {mode}: ok ({error})")
