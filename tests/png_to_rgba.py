"""Decodes a PNG with Pillow, independently of dcsgrid's encoder, for the C++ tests.

    png_to_rgba.py IN.png OUT.raw   writes "WIDTH HEIGHT MODE\n" (MODE as stored: RGB, RGBA...)
                                    then the pixels as RGBA bytes, rows from the top
"""
import sys

from PIL import Image

with Image.open(sys.argv[1]) as image:
    image.verify()  # the chunks' CRCs and structure
with Image.open(sys.argv[1]) as image:
    mode = image.mode
    rgba = image.convert("RGBA")
    with open(sys.argv[2], "wb") as out:
        out.write(f"{rgba.width} {rgba.height} {mode}\n".encode())
        out.write(rgba.tobytes())
