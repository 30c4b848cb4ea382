"""Builds a small byte-level BPE tokenizer into a local directory.

Benchmark clients such as AIPerf count prompt and response tokens with a
Hugging Face tokenizer, which they download from the Hub by default. The
interoperability suite runs without the Hub (only package registries are
reachable), so it trains its own tokenizer on generated text, deterministically,
and hands the directory to the client as a local path. The directory holds
``tokenizer.json`` (the trained model) and ``tokenizer_config.json`` (what
``transformers.AutoTokenizer`` needs to load it without a ``config.json``).

Byte-level pre-tokenization means every input, the client's prompt corpus and
the engine's answers included, encodes without unknown tokens.

    python build_tokenizer.py OUT_DIR [--vocab-size N] [--hub-cache DIR --repo-id ORG/NAME]

``--hub-cache`` also lays the files out as a snapshot of ``ORG/NAME`` in a
Hugging Face hub cache at DIR (``models--ORG--NAME/snapshots/<hash>`` with
``refs/main``). Point ``HF_HUB_CACHE`` there and a client can name the
tokenizer by repository id with ``HF_HUB_OFFLINE=1``: some clients (AIPerf
0.13) resolve every tokenizer, a local path included, through the hub cache
once offline mode is on, and reject a filesystem path there.

The script loads the result back with ``AutoTokenizer`` (offline, local files
only) and checks a round trip before it exits 0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import sys
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

SPECIAL = ["<|endoftext|>"]
#: Syllables the generated words are made of: varied enough for merges to form.
SYLLABLES = ["ro", "ute", "en", "gi", "ne", "ca", "che", "to", "ken", "str", "eam", "qu", "eue", "ba", "tch", "pre", "fix", "lo", "ad", "she", "d", "th", "the", "and", "ing", "ion", "er", "al", "is", "of"]


def corpus(lines: int, seed: int) -> list[str]:
    """Pseudo-English lines from a seeded generator: the same text on every run."""
    rng = random.Random(seed)
    out = []
    for _ in range(lines):
        words = ["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(6, 16))]
        out.append(" ".join(words).capitalize() + rng.choice([".", ",", "?", "!", ";"]))
    return out


def build(out_dir: Path, vocab_size: int) -> None:
    """Trains the tokenizer and writes ``tokenizer.json`` and ``tokenizer_config.json`` into ``out_dir``."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(corpus(4000, seed=7), trainer=trainer)
    out_dir.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(out_dir / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": 1_000_000,
        "bos_token": None,
        "eos_token": SPECIAL[0],
        "unk_token": None,
        "pad_token": SPECIAL[0],
        "clean_up_tokenization_spaces": False,
    }
    (out_dir / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")


def lay_out_hub_cache(out_dir: Path, hub_cache: Path, repo_id: str) -> Path:
    """Copies ``out_dir`` into ``hub_cache`` as the ``main`` snapshot of ``repo_id``; returns the snapshot directory."""
    repo = hub_cache / ("models--" + repo_id.replace("/", "--"))
    digest = hashlib.sha1()
    for name in sorted(p.name for p in out_dir.iterdir()):
        digest.update(name.encode() + b"\0" + (out_dir / name).read_bytes())
    commit = digest.hexdigest()
    snapshot = repo / "snapshots" / commit
    shutil.rmtree(repo, ignore_errors=True)
    shutil.copytree(out_dir, snapshot)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    return snapshot


def check(out_dir: Path) -> None:
    """Loads the directory the way a client does, with the Hub switched off, and checks a round trip."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from transformers import AutoTokenizer

    loaded = AutoTokenizer.from_pretrained(str(out_dir), local_files_only=True)
    text = "Shall I compare thee to a summer's day? Zürich, 42 tokens."
    ids = loaded.encode(text, add_special_tokens=False)
    if not ids or loaded.decode(ids) != text:
        raise SystemExit(f"build_tokenizer: round trip failed for {out_dir}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--vocab-size", type=int, default=2000)
    parser.add_argument("--hub-cache", type=Path)
    parser.add_argument("--repo-id", default="switchyard/interop-bpe")
    args = parser.parse_args(argv)
    build(args.out_dir, args.vocab_size)
    check(args.out_dir)
    if args.hub_cache is not None:
        check(lay_out_hub_cache(args.out_dir, args.hub_cache, args.repo_id))
    print(args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
