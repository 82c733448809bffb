"""The sample telemetry's raw objects written fast: the bytes ``bench.archive_scan.write_raw_chunk`` writes.

``write_raw_chunk`` builds each stream record as a dict and archives it (about 700 µs a change on the shared VM:
45 minutes for an hour of 5 million). Here each line is one format string filled with the same values, drawn
from the same random sequence, so the objects are byte for byte the archiver's (``check`` compares them).
"""

from __future__ import annotations

import gzip
import random
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from bench.archive_scan import BATCH, PREFIX, write_raw_chunk

START = 1772323200  # 2026-03-01 00:00 UTC, bench.archiver.telemetry_record's default
TABLE = "telemetry_2026-03-01"
STREAM_LABEL = "20260301T000000000"  # the stream label as the archiver writes it into keys
_IMAGE = ('{{\\"pk\\":{{\\"S\\":\\"{device}\\"}},\\"sk\\":{{\\"N\\":\\"{sk}\\"}},'
          '\\"site\\":{{\\"S\\":\\"plant-{site}\\"}},'
          '\\"line\\":{{\\"S\\":\\"line-{line}\\"}},\\"firmware\\":{{\\"S\\":\\"4.2.17\\"}},'
          '\\"temperature_c\\":{{\\"N\\":\\"{temperature:.2f}\\"}},\\"humidity_pct\\":{{\\"N\\":\\"{humidity:.1f}\\"}},'
          '\\"pressure_hpa\\":{{\\"N\\":\\"{pressure:.1f}\\"}},\\"vibration_mm_s\\":{{\\"N\\":\\"{vibration:.3f}\\"}},'
          '\\"rpm\\":{{\\"N\\":\\"{rpm}\\"}},\\"status\\":{{\\"S\\":\\"{status}\\"}},'
          '\\"expires_at\\":{{\\"N\\":\\"{expires}\\"}}}}')
_LINE = ('{{"eventID":"{i:032x}","eventName":"INSERT","sequenceNumber":"{sequence}",'
         '"approximateCreationDateTime":"{created}","table":"' + TABLE + '",'
         '"keys":"{{\\"pk\\":{{\\"S\\":\\"{device}\\"}},\\"sk\\":{{\\"N\\":\\"{sk}\\"}}}}",'
         '"newImage":"' + _IMAGE + '","oldImage":null,"userIdentity":null}}\n')


def _line(i: int, rng: random.Random, per_second: int) -> tuple[str, int, str]:
    """Record ``i``'s line, its hour (epoch seconds) and its sequence number; ``rng`` drawn as the record does."""
    at = START + i // per_second
    temperature, humidity, pressure = 20 + rng.random() * 5, 40 + rng.random() * 10, 1000 + rng.random() * 30
    vibration, rpm = rng.random() * 3, 1450 + rng.randrange(100)
    status = "OK" if rng.random() > 0.02 else "WARNING1"
    sequence = str(100000000000000000000 + i)
    line = _LINE.format(
        i=i, sequence=sequence, created=datetime.fromtimestamp(at, UTC).isoformat(), device=f"device-{i % 500:04d}",
        sk=at * 1000 + i % 1000, site=i % 7, line=i % 23, temperature=temperature, humidity=humidity,
        pressure=pressure, vibration=vibration, rpm=rpm, status=status, expires=at + 30 * 86400)
    return line, at - at % 3600, sequence


def write_fast_chunk(root: str, start: int, stop: int, per_second: int) -> int:
    """Records ``start``..``stop`` as ``write_raw_chunk`` writes them (same keys, same bytes); the bytes written."""
    rng = random.Random(start)
    written = 0
    for first in range(start, stop, BATCH):
        groups: list[tuple[int, list[str], list[str]]] = []  # a run of one hour: its hour, lines, sequence numbers
        for i in range(first, min(first + BATCH, stop)):
            line, hour, sequence = _line(i, rng, per_second)
            if not groups or groups[-1][0] != hour:
                groups.append((hour, [], []))
            groups[-1][1].append(line)
            groups[-1][2].append(sequence)
        for hour, lines, sequences in groups:
            at = datetime.fromtimestamp(hour, UTC)
            path = Path(root) / (f"{PREFIX}table={TABLE}/dt={at:%Y-%m-%d}/hour={at:%H}/"
                                 f"{STREAM_LABEL}-{sequences[0]}-{sequences[-1]}.jsonl.gz")
            path.parent.mkdir(parents=True, exist_ok=True)
            body = gzip.compress("".join(lines).encode(), compresslevel=6, mtime=0)
            path.write_bytes(body)
            written += len(body)
    return written


def check(changes: int = 2500, per_second: int = 278) -> None:
    """Raise unless both writers give the same files and bytes for ``changes`` records."""
    with tempfile.TemporaryDirectory() as slow, tempfile.TemporaryDirectory() as fast:
        write_raw_chunk(slow, 0, changes, per_second)
        write_fast_chunk(fast, 0, changes, per_second)
        slow_files = {p.relative_to(slow): p.read_bytes() for p in Path(slow).rglob("*.gz")}
        fast_files = {p.relative_to(fast): p.read_bytes() for p in Path(fast).rglob("*.gz")}
        if slow_files != fast_files:
            raise AssertionError(f"the fast writer differs: {sorted(set(slow_files) ^ set(fast_files))[:3]}")
