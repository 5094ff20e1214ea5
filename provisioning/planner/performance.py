"""Capacity and expected back-end bandwidth of a planned layout.

The figures follow the vendor solution papers quoted in DESIGN.md section 2:

- Usable Lustre capacity = data drives x drive size x 0.927 (formatting and filesystem
  overhead). An 8+2 group has 8 data drives, a RAID-10 group half its drives. Spares count in
  raw capacity only. The vendor's table quotes usable capacity to 4 significant figures
  (133.488 -> 133.5, 1423.872 -> 1424); the plan keeps 3 decimals and leaves rounding to
  whoever shows it.
- obdfilter-survey measured about 410 MB/s per healthy 8+2 OST at 128 KiB segments, and an OSS
  ceiling near 5 GB/s (19.8 GB/s for 4 OSSs and 48 OSTs). 512 KiB segments gave "more than 20 GB/s
  instead of 19.8" per rack, i.e. at least 1 % more; we assume 3 % (256 KiB halfway, 1.5 %).
  With 12 OSTs per OSS, 512 KiB then reaches the 5 GB/s ceiling (12 x 422.3 = 5068 -> 5000).
"""

from __future__ import annotations

USABLE_FRACTION = 0.927
OST_MB_S = 410.0
# Gain over 128 KiB segments; see the module docstring for where the numbers come from.
SEGMENT_GAIN = {128: 1.0, 256: 1.015, 512: 1.03}
OSS_CEILING_MB_S = 5000.0


def usable_tb(data_drives: int, drive_tb: float) -> float:
    return round(data_drives * drive_tb * USABLE_FRACTION, 3)


def ost_mb_s(segment_kib: int) -> float:
    """Expected obdfilter-survey rate of one healthy 8+2 OST."""
    return round(OST_MB_S * SEGMENT_GAIN[segment_kib], 1)


def server_mb_s(osts: int, segment_kib: int) -> float:
    """Expected back-end rate of one OSS serving `osts` healthy OSTs."""
    return round(min(osts * ost_mb_s(segment_kib), OSS_CEILING_MB_S), 1)
