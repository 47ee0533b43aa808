"""File and media tools whose options run commands or write files (docs/security.md#code-carriers).

``split --filter=CMD`` runs CMD through the shell for every piece; ImageMagick
opens a file name starting with ``|`` as a pipe from a command; ghostscript
without ``SAFER`` lets PostScript open files and pipes (``%pipe%CMD``); pandoc runs
a ``--filter`` program; ``openssl -engine PATH`` loads a library; ``strace -o
|CMD`` pipes its trace into a command. Their outputs are written files:
``pandoc -o``, ``strace``/``ltrace -o``, ghostscript's ``-sOutputFile``, the last
operand of ``ffmpeg`` and ``convert``, pip's ``download -d``/``install --target``.
Each reader returns a :class:`~shell.carriers._runners.Carried`. A pure leaf.
"""

from __future__ import annotations

from collections.abc import Sequence

from multiplex.shell.carriers._runners import Carried, carried_of
from multiplex.shell.parsing._getopt import read_options, table

__all__ = ["MEDIA_READERS", "openssl_engine"]

_SPLIT = table(
    "bytes= line-bytes= lines= number= additional-suffix= filter= numeric-suffixes=? "
    "hex-suffixes=? suffix-length= elide-empty-files unbuffered verbose separator=",
    "a= b= C= d x l= n= e u t=",
)


def _split(args: Sequence[str], fed: str | None) -> Carried:
    filters = read_options(args, _SPLIT).values("--filter")
    return carried_of(filters, "split --filter runs a shell command" if filters else None)


def _imagemagick(args: Sequence[str], fed: str | None) -> Carried:
    # "|cmd" as a file name is popen(cmd); msl:/mvg: read a script the line does not show.
    pipes = [a[1:] for a in args if a.startswith("|")]
    scripts = [a for a in args if a.lower().startswith(("msl:", "mvg:"))]
    operands = [a for a in args if not a.startswith(("-", "+", "|"))]
    writes = (operands[-1],) if len(operands) > 1 else ()
    runs = "ImageMagick opens a pipe from a command" if pipes else None
    return carried_of(pipes, runs, "an ImageMagick script" if scripts else None, writes)


_UNSAFE_GS = ("-dNOSAFER", "-dDELAYSAFER", "-dSAFER=false", "-dNOSAFER=true", "-dWRITESYSTEMDICT")


def _ghostscript(args: Sequence[str], fed: str | None) -> Carried:
    outputs = [
        a.partition("=")[2] for a in args if a.startswith(("-sOutputFile=", "-sOUTPUTFILE="))
    ]
    outputs += [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-o"]
    pipes = [o.removeprefix("%pipe%").removeprefix("|") for o in outputs]
    pipes = [p for p, o in zip(pipes, outputs, strict=True) if p != o]
    unsafe = any(a.startswith(_UNSAFE_GS) for a in args)
    runs = (
        "ghostscript writes into a command"
        if pipes
        else "ghostscript without SAFER runs PostScript with file and pipe access"
        if unsafe
        else None
    )
    writes = tuple(o for o in outputs if not o.startswith(("%", "|", "-")))
    return carried_of(pipes, runs, None, writes)


_PANDOC = table(
    "output= filter= lua-filter= data-dir= extract-media= log= template= defaults= "
    "reference-doc= include-in-header= include-before-body= include-after-body= "
    "metadata-file= bibliography= from= read= to= write= standalone",
    "o= F= L= d= f= r= t= w= s",
)


def _pandoc(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _PANDOC)
    programs = parsed.values("-F", "--filter")
    lua = parsed.values("-L", "--lua-filter") + parsed.values("-d", "--defaults")
    writes = tuple(
        parsed.values("-o", "--output") + parsed.values("--extract-media") + parsed.values("--log")
    )
    runs = "pandoc --filter runs a program" if programs else None
    return Carried((), runs, "a pandoc filter or defaults file" if lua else None, writes)


_TRACE = table("output=", "o= e= p= s= u= E= a= S= P= b= I= X= O= U=")


def _trace(args: Sequence[str], fed: str | None) -> Carried:
    outs = read_options(args, _TRACE, permute=False).values("-o", "--output")
    pipes = [o[1:] for o in outs if o.startswith(("|", "!"))]
    runs = "strace -o pipes into a command" if pipes else None
    return carried_of(pipes, runs, None, tuple(o for o in outs if o[:1] not in ("|", "!")))


def _ffmpeg(args: Sequence[str], fed: str | None) -> Carried:
    # The output is the last word (every ffmpeg option before it takes a value or is a flag).
    last = args[-1] if args else ""
    return Carried(writes=(last,) if last and not last.startswith("-") else ())


def openssl_engine(args: Sequence[str]) -> str | None:
    """Why ``openssl ARGS`` loads code: an engine or provider given as a library path,
    the dynamic engine told one (``-pre SO_PATH:/tmp/x.so``, ``-pre LOAD``), or ``openssl
    engine /tmp/x.so``."""
    for i, arg in enumerate(args[:-1]):
        value = args[i + 1]
        if arg in ("-engine", "-provider-path", "-provider") and (
            "/" in value or value.endswith(".so")
        ):
            return f"openssl {arg} loads a library"
        if arg in ("-pre", "-post") and value.partition(":")[0].upper() in ("SO_PATH", "LOAD"):
            return f"openssl {arg} {value.partition(':')[0]} loads a library"
    if tuple(args[:1]) == ("engine",) and any(
        "/" in a or a.endswith(".so") for a in args[1:] if not a.startswith("-")
    ):
        return "openssl engine loads a library"
    return None


_PIP = table(
    "dest= target= prefix= root= wheel-dir= src= log= report= requirement= constraint= "
    "index-url= extra-index-url= editable= user upgrade no-deps",
    "d= t= w= r= c= i= e= U",
)


def _pip(args: Sequence[str], fed: str | None) -> Carried:
    parsed = read_options(args, _PIP)
    writes = parsed.values("-d", "--dest", "-t", "--target", "--prefix", "--root")
    writes += parsed.values("-w", "--wheel-dir", "--src", "--log", "--report")
    return Carried(writes=tuple(writes))


def _zip(args: Sequence[str], fed: str | None) -> Carried:
    """``zip -T -TT CMD``: the command that tests the archive runs (its name appended).
    zip reads ``-TT`` as one option, and takes a prefix of ``--unzip-command``."""
    commands = [
        args[i + 1]
        for i, a in enumerate(args[:-1])
        if a == "-TT" or (len(a) > 7 and "--unzip-command".startswith(a))
    ]
    commands += [a.partition("=")[2] for a in args if a.startswith("--unzip") and "=" in a]
    return carried_of(commands, "zip -TT runs a command" if commands else None)


MEDIA_READERS = {
    "zip": _zip,
    "split": _split, "convert": _imagemagick, "magick": _imagemagick, "mogrify": _imagemagick,
    "composite": _imagemagick, "montage": _imagemagick, "identify": _imagemagick,
    "stream": _imagemagick, "conjure": _imagemagick, "gs": _ghostscript,
    "ghostscript": _ghostscript, "gsc": _ghostscript, "pandoc": _pandoc, "strace": _trace,
    "ltrace": _trace, "ffmpeg": _ffmpeg, "pip": _pip, "pip3": _pip,
}  # fmt: skip
