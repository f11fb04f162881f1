#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""2 MB of text from a fixed word list, seeded (the same bytes every time):
the input of tools/bench/race_warnings.sh and tools/bench/real.sh.
Usage: gen_text.py OUT"""
import random
import sys

random.seed(32)
words = ("thread lock race buffer queue pool heap block compress stream data value "
         "order clock vector signal wait join barrier atomic").split()
out, n = [], 0
while n < 2 << 20:
    line = " ".join(random.choice(words) for _ in range(random.randint(5, 14))) + "\n"
    out.append(line)
    n += len(line)
with open(sys.argv[1], "w") as f:
    f.write("".join(out)[: 2 << 20])
