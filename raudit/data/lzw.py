"""Decoder for Unix ``compress`` (``.Z``) files, in pure Python.

The canonical ISOLET zip stores its members as ``.Z``; the standard library reads
gzip, bz2 and xz but not LZW. The format (as ncompress writes it, and as
``gzip -d`` reads it): a 3-byte header ``1F 9D flags`` (low 5 bits: the largest
code width; bit 7: block mode, where code 256 clears the table), then
little-endian codes starting 9 bits wide. Codes are written in groups of eight,
so whenever the width changes (or the table is cleared) the writer pads to the
end of the current group of ``width`` bytes; the reader must skip that padding.
"""

from __future__ import annotations

from raudit.errors import DataError

MAGIC = b"\x1f\x9d"
_CLEAR = 256


def decompress(data: bytes) -> bytes:
    """The bytes that ``compress`` packed into ``data``; DataError if malformed."""
    if data[:2] != MAGIC or len(data) < 3:
        raise DataError("not a Unix-compress (.Z) stream: bad magic bytes")
    flags = data[2]
    maxbits = flags & 0x1F
    block = bool(flags & 0x80)
    if flags & 0x60 or not 9 <= maxbits <= 16:
        raise DataError(f"unsupported .Z header flags 0x{flags:02x}")
    maxbits = max(maxbits, 10)  # like gzip: a 9-bit limit is read as 10
    n = len(data)
    if n == 3:
        return b""

    # table[256] is the clear code's slot in block mode; it is never looked up.
    base = 257 if block else 256
    table = [bytes((i,)) for i in range(256)] + ([b""] if block else [])
    bits, mask = 9, 0x1FF
    pos = mark = 3  # mark: where the current group of codes started
    buf = left = 0
    out: list[bytes] = []
    prev = b""  # empty at the start and after a clear: the next code adds no entry

    def skip_padding() -> bool:
        # Jump to the end of the current group of `bits` bytes; False if past the end.
        nonlocal pos, buf, left, mark
        rem = (pos - mark) % bits
        if rem:
            pos += bits - rem
        buf = left = 0
        mark = pos
        return pos < n

    while pos < n:
        if len(table) - 1 >= mask and bits < maxbits:
            if not skip_padding():
                break
            bits += 1
            mask = (1 << bits) - 1
        while left < bits:
            if pos >= n:
                raise DataError("corrupt .Z stream: it ends inside a code")
            buf |= data[pos] << left
            pos += 1
            left += 8
        code = buf & mask
        buf >>= bits
        left -= bits

        if block and code == _CLEAR:
            del table[base:]
            prev = b""
            if not skip_padding():
                break
            bits, mask = 9, 0x1FF
            continue
        if code < len(table):
            entry = table[code]
        elif code == len(table) and prev:
            entry = prev + prev[:1]  # the KwKwK case: the code this very step defines
        else:
            raise DataError(f"corrupt .Z stream: code {code} with {len(table)} table entries")
        if prev and len(table) - 1 < mask:
            table.append(prev + entry[:1])
        out.append(entry)
        prev = entry
    return b"".join(out)
