"""Raw 64-bit feature ids -> dense embedding rows on the device, feeding gpuprim.nn.EmbeddingBag.

    python examples/id_remap_embedding_bag.py [--device cpu|cuda]

A recommendation model sees arbitrary int64 feature ids (hashes of user ids, item ids, ...). gpuprim.IdRemapper
gives each id a dense row 0, 1, 2, ... in the order ids are first seen, keeping the map in a GPU hash table
(gpuprim.HashMap), so the embedding table only needs as many rows as ids actually seen, and no step waits for
the host: the training step below captures in a CUDA graph on a GPU.
"""
from __future__ import annotations

import argparse

import torch

import gpuprim


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    device = parser.parse_args().device
    torch.manual_seed(0)

    max_ids, dim = 1 << 16, 32
    remap = gpuprim.IdRemapper(capacity=2 * max_ids, device=device)  # load factor <= 0.5
    bag = gpuprim.nn.EmbeddingBag(max_ids, dim, mode="sum", device=device)
    optimizer = torch.optim.SGD(bag.parameters(), lr=0.1)

    for step in range(3):
        # A batch of 512 bags, 8 raw ids each: hashed ids from a small pool, so ids repeat across steps.
        pool = torch.randint(-(2**62), 2**62, (4096,), generator=torch.Generator().manual_seed(1))
        raw = pool[torch.randint(0, pool.numel(), (512 * 8,))].to(device)
        offsets = torch.arange(0, raw.numel(), 8, device=device)
        rows = remap(raw)  # dense rows, new ids appended in first-seen order, no host sync
        loss = bag(rows, offsets).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}, rows in use {int(remap.num_rows())}")

    # The same id always maps to the same row; unseen ids give -1 with lookup.
    probe = raw[:4]
    assert torch.equal(remap.lookup(probe), remap(probe))
    print("rows of the first 4 ids:", remap.lookup(probe).tolist())
    print("an unseen id:", remap.lookup(torch.tensor([12345], device=device)).tolist())


if __name__ == "__main__":
    main()
