"""A failing seed made readable (issue 13): recorded as data and shrunk (shrink.py), told as a
story in the terminal (story.py), drawn as one self-contained HTML page (picture.py)."""
