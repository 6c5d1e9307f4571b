"""gpuprim: CUDA primitives and training operators for PyTorch.

``import gpuprim`` loads the compiled library, which registers every op as
``torch.ops.gpuprim.<op>`` (CPU, CUDA, Meta and Autograd kernels), and exports typed wrappers
with torch-like signatures. See README.md for the op table and DESIGN.md for the layout.
"""
from gpuprim._library import build_info
from gpuprim._library import load as _load_library
from gpuprim._version import __version__ as __version__

_load_library()  # checks the build against this torch first: a mismatch is an ImportError saying what to do

from gpuprim import distributed, nn  # noqa: E402
from gpuprim._determinism import deterministic, is_deterministic, set_deterministic  # noqa: E402
from gpuprim._errors import InputError, check_errors  # noqa: E402
from gpuprim._validate import is_validating, set_validate, validate  # noqa: E402
from gpuprim.bfs import bfs  # noqa: E402
from gpuprim.bincount import bincount  # noqa: E402
from gpuprim.compact import compact  # noqa: E402
from gpuprim.cumsum import cumsum  # noqa: E402
from gpuprim.embedding_bag import embedding_bag, embedding_bag_renorm_  # noqa: E402
from gpuprim.hash_map import HashMap, IdRemapper  # noqa: E402
from gpuprim.histogram import histogram  # noqa: E402
from gpuprim.index_add import (  # noqa: E402
    index_add,
    index_add_,
    scatter_add,
    scatter_add_,
    scatter_reduce,
    scatter_reduce_,
)
from gpuprim.masked_select import masked_select  # noqa: E402
from gpuprim.moe_permute import moe_permute  # noqa: E402
from gpuprim.moe_route import Routing, moe_aux_loss, moe_route, moe_route_metadata, moe_update_bias  # noqa: E402
from gpuprim.moe_unpermute import moe_unpermute  # noqa: E402
from gpuprim.run_length_encode import run_length_encode  # noqa: E402
from gpuprim.segment_reduce import segment_reduce  # noqa: E402
from gpuprim.sort import argsort, sort  # noqa: E402
from gpuprim.sort_pairs import sort_pairs  # noqa: E402
from gpuprim.sort_values import sort_values  # noqa: E402
from gpuprim.spmm import csr_transpose, spmm  # noqa: E402
from gpuprim.sum import _set_reduce_config as _set_reduce_config  # noqa: E402  (tests tune the grid)
from gpuprim.sum import mean, sum  # noqa: E402,A004
from gpuprim.topk import topk  # noqa: E402
from gpuprim.topk_gating import topk_gating  # noqa: E402
from gpuprim.unique import unique  # noqa: E402

__all__ = [
    "argsort",
    "bfs",
    "bincount",
    "build_info",
    "check_errors",
    "compact",
    "csr_transpose",
    "cumsum",
    "deterministic",
    "distributed",
    "embedding_bag",
    "embedding_bag_renorm_",
    "HashMap",
    "histogram",
    "IdRemapper",
    "index_add",
    "index_add_",
    "InputError",
    "is_deterministic",
    "is_validating",
    "masked_select",
    "mean",
    "moe_aux_loss",
    "moe_permute",
    "moe_route",
    "moe_route_metadata",
    "moe_update_bias",
    "moe_unpermute",
    "Routing",
    "nn",
    "run_length_encode",
    "scatter_add",
    "scatter_add_",
    "scatter_reduce",
    "scatter_reduce_",
    "segment_reduce",
    "set_deterministic",
    "set_validate",
    "sort",
    "sort_pairs",
    "sort_values",
    "spmm",
    "sum",
    "topk",
    "topk_gating",
    "unique",
    "validate",
]
