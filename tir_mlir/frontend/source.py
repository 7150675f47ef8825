"""Program text from bytes: UTF-8 (Python's source encoding), or a located error."""

from tir_mlir.errors import SourceLoc, TIRParseError


def decode(data: bytes, filename: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        before = data[: e.start]
        line = before.count(b"\n") + 1
        col = e.start - (before.rfind(b"\n") + 1) + 1
        raise TIRParseError(
            f"the file is not valid UTF-8 (byte 0x{data[e.start]:02x})",
            SourceLoc(filename, line, col),
        ) from None
    return text[1:] if text.startswith("\ufeff") else text
