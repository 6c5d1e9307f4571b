"""spmm_batch_rows.patch's shared shuffle tree against the lane chunk's tree, bit for bit, on the CPU.

The patch reduces 8 rows a warp: at level o (16, 8, 4) the lanes with bit o clear keep the even row of each pair and
the others the odd one, then levels 2 and 1 shuffle down; row j ends in lane (j & 1) << 4 | (j >> 1 & 1) << 3 |
(j >> 2 & 1) << 2. The order contract (prim/device/merge_path/row_order.h) is one 32-lane shuffle-down tree a row,
levels at or above the row's length skipped (the tiles' form). This emulates both in float32 for sum, max and min
over rows of 0..32 nonzeros with -0.0, +-0.0 ties, NaN and inf, and counts the rows whose bits differ.
Run: python docs/experiments/spmm_batch_tree_check.py  (numpy)
"""
import numpy as np

F32 = np.float32
IDENTITY = {"sum": F32(0), "max": F32(-np.inf), "min": F32(np.inf)}


def combine(op, a, b):
    if op == "sum":
        return F32(a + b)
    if op == "max":
        return a if (a != a or a > b) else b
    return a if (a != a or a < b) else b


def lane_partials(op, values, n):
    """Lane v's partial: the identity combined with its product, or the identity past the row."""
    return [combine(op, IDENTITY[op], values[v]) if v < n else IDENTITY[op] for v in range(32)]


def row_tree(op, partials, n):
    """One row's shuffle-down tree (a lane past 31 reads its own value, as __shfl_down_sync does)."""
    a = list(partials)
    for offset in (16, 8, 4, 2, 1):
        if offset < n:
            a = [combine(op, a[v], a[v + offset] if v + offset < 32 else a[v]) for v in range(32)]
    return a[0]


def batch_tree(op, rows):
    """The patch's tree over 8 rows' partials; every level runs. Returns row j's value for each j."""
    acc = [[rows[j][lane] for j in range(8)] for lane in range(32)]
    held, offset = 8, 16
    while held > 1:
        new = [list(values) for values in acc]
        for lane in range(32):
            upper = (lane & offset) != 0
            partner = lane ^ offset
            for i in range(held // 2):
                keep = acc[lane][2 * i + 1] if upper else acc[lane][2 * i]
                # What the partner sends: chosen by its own `upper`, the opposite of this lane's.
                other = acc[partner][2 * i + 1] if upper else acc[partner][2 * i]
                new[lane][i] = combine(op, other, keep) if upper else combine(op, keep, other)
        acc = new
        held //= 2
        offset //= 2
    a = [acc[lane][0] for lane in range(32)]
    for offset in (2, 1):
        a = [combine(op, a[lane], a[lane + offset] if lane + offset < 32 else a[lane]) for lane in range(32)]
    return [a[(j & 1) << 4 | (j >> 1 & 1) << 3 | (j >> 2 & 1) << 2] for j in range(8)]


def sample_values(rng, kind):
    values = (rng.standard_normal(32) * 10.0 ** rng.integers(-3, 4)).astype(F32)
    if kind == 1:
        values = np.where(rng.random(32) < 0.3, F32(-0.0), values).astype(F32)
    elif kind == 2:
        values[rng.integers(0, 32)] = np.nan
    elif kind == 3:
        values = np.where(rng.random(32) < 0.5, F32(np.inf) * np.sign(values), values).astype(F32)
    elif kind == 4:
        values = np.where(rng.random(32) < 0.5, F32(-0.0), F32(0.0)).astype(F32)
    return values


def same_bits(a, b):
    if a != a and b != b:
        return True
    return np.array([a], F32).view(np.uint32)[0] == np.array([b], F32).view(np.uint32)[0]


def main():
    rng = np.random.default_rng(0)
    mismatches = 0
    for trial in range(3000):
        op = ("sum", "max", "min")[trial % 3]
        lengths = rng.integers(0, 33, 8)
        rows, expected = [], []
        for n in lengths:
            partials = lane_partials(op, sample_values(rng, rng.integers(0, 5)), n)
            rows.append(partials)
            expected.append(row_tree(op, partials, n))
        got = batch_tree(op, rows)
        mismatches += sum(not same_bits(e, g) for e, g in zip(expected, got))
    print("rows whose bits differ:", mismatches)
    return mismatches


if __name__ == "__main__":
    raise SystemExit(1 if main() else 0)
