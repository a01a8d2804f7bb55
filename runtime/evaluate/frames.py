"""Screens shown to a vision-language model beside the text log: one image per frame, or mosaics.

`--context frames` and `--context mosaic` add images to the log; joined to a step selection with `+`
(`last:50+mosaic`, `evidence+frames`) they show the steps that selection shows, alone every step up to
the horizon (`full`). The screens shown are those of the states the log shows (runtime/trace/frames.py:
frame t is the screen after step t, 0 the start), so a screen after the question's horizon is never sent.

- frames: each screen its own image, scaled to a cell with its step number drawn in the corner, after
  a text part naming the step.
- mosaic, EMemBench's protocol: the labelled cells tiled `cols` to a row, `per_image` cells to an image,
  `per_batch` images to a request. More screens than a request holds are thinned evenly, the last kept;
  the text before the images says how many are shown.

Images are base64 PNG data URLs in OpenAI's image_url parts. Their tokens are estimated by OpenAI's
high-detail rule (85 a picture and 170 per 512-pixel tile once scaled to fit 2048 and then 768 pixels
on its short side); other servers count otherwise (Qwen-VL: one token per 28 x 28 pixels).
"""

from __future__ import annotations

import base64
import dataclasses
import io
import math
from dataclasses import dataclass

import duckdb
import numpy as np

from qtc.errors import InvalidOption, UserError
from qtc.runtime.chat import image_part
from qtc.runtime.trace.frames import episode_frames, png_bytes

from .context import ContextMode
from .registry import EVALUATE_ENVIRONMENTS

IMAGE_FORMS = ("frames", "mosaic")
LABEL_INK, LABEL_PAPER = (255, 255, 255), (0, 0, 0)


@dataclass(frozen=True)
class Mosaic:
    """How screens are laid out (EMemBench's protocol by default); `cell` also sizes a single frame."""
    cols: int = 10
    cell: int = 160  # pixels a side
    per_image: int = 200
    per_batch: int = 10  # images a request

    def __post_init__(self):
        for field in dataclasses.fields(self):
            if getattr(self, field.name) <= 0:
                raise InvalidOption(f"mosaic_{field.name}", f"must be positive, got {getattr(self, field.name)}")


@dataclass(frozen=True)
class VisualMode:
    """A context with screens: a step selection (a ContextMode, whose attributes it answers to, so the
    batching reads it as that selection) and how the screens are shown."""
    selection: ContextMode
    images: str  # one of IMAGE_FORMS

    @classmethod
    def parse(cls, text: str) -> "ContextMode | VisualMode":
        """A --context value: a selection alone (a text context), or joined to an image form by `+`."""
        parts = text.split("+")
        forms = [part for part in parts if part in IMAGE_FORMS]
        if not forms:
            return ContextMode.parse(text)
        rest = [part for part in parts if part not in IMAGE_FORMS]
        if len(forms) > 1 or len(rest) > 1:
            raise InvalidOption("context", f"{text!r}: expected one of {', '.join(IMAGE_FORMS)}, alone or joined "
                                           "by + to one step selection (last:50+mosaic)")
        selection = ContextMode.parse(rest[0] if rest else "full")
        if selection.kind == "none":
            raise InvalidOption("context", f"{text!r}: none shows no log, so no screens either")
        return cls(selection, forms[0])

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("selection", "images"):  # not yet set (copying, unpickling)
            raise AttributeError(name)
        return getattr(self.selection, name)

    def __str__(self) -> str:
        selection = str(self.selection)
        return self.images if selection == "full" else f"{selection}+{self.images}"


def _font(cell: int):
    from PIL import ImageFont

    return ImageFont.load_default(size=max(10, cell // 10))


def labelled_cell(frame: np.ndarray, step: int, cell: int) -> np.ndarray:
    """A screen scaled to `cell` pixels a side (nearest pixel: the game's pixel art stays sharp), its
    step drawn in white on black in the top-left corner."""
    from PIL import Image, ImageDraw

    image = Image.fromarray(frame).resize((cell, cell), Image.NEAREST)
    draw = ImageDraw.Draw(image)
    font = _font(cell)
    left, top, right, bottom = draw.textbbox((0, 0), str(step), font=font)
    pad = max(1, cell // 80)
    draw.rectangle((0, 0, right + 2 * pad, bottom + 2 * pad), fill=LABEL_PAPER)
    draw.text((pad, pad), str(step), font=font, fill=LABEL_INK)
    return np.asarray(image)


def tile(cells: list[np.ndarray], cols: int) -> np.ndarray:
    """Cells tiled `cols` to a row, left to right then top to bottom; the last row's gaps are black."""
    size = cells[0].shape[0]
    rows = math.ceil(len(cells) / cols)
    canvas = np.zeros((rows * size, min(cols, len(cells)) * size, 3), np.uint8)
    for index, cell in enumerate(cells):
        row, col = divmod(index, cols)
        canvas[row * size:(row + 1) * size, col * size:(col + 1) * size] = cell
    return canvas


def screen_url(frame: np.ndarray, step: int, cell: int) -> str:
    """A screen as a model is shown it alone (a labelled cell), as a PNG data URL: for pages."""
    return image_part(png_bytes(labelled_cell(frame, step, cell)))["image_url"]["url"]


def thinned(steps: list[int], limit: int) -> list[int]:
    """At most `limit` of `steps`, evenly spaced, the first and last kept."""
    if len(steps) <= limit:
        return steps
    if limit == 1:
        return steps[-1:]
    return [steps[round(i * (len(steps) - 1) / (limit - 1))] for i in range(limit)]


def _text(text: str) -> dict:
    return {"type": "text", "text": text}


def screen_parts(frames: np.ndarray, steps: list[int], images: str, layout: Mosaic) -> list[dict]:
    """The content parts showing the screens of `steps` (in step order): a text introducing them, then
    each image after a caption naming what it shows."""
    steps = sorted(steps)
    if not steps:
        return []
    meaning = ("the number in a cell's corner is its step: the screen after that step, what you saw before "
               "the next (0: the start, before step 1)")
    if images == "frames":
        parts = [_text(f"SCREENS: {len(steps)} screen(s) you saw, in step order; {meaning}.")]
        for step in steps:
            parts += [_text(f"Screen after step {step}:" if step else "Screen at the start:"),
                      image_part(png_bytes(labelled_cell(frames[step], step, layout.cell)))]
        return parts
    shown = thinned(steps, layout.per_image * layout.per_batch)
    chunks = [shown[i:i + layout.per_image] for i in range(0, len(shown), layout.per_image)]
    intro = (f"SCREENS: {len(chunks)} mosaic image(s) of the screens you saw, {layout.cols} to a row, left to "
             f"right then top to bottom, in step order; {meaning}.")
    if len(shown) < len(steps):
        intro += f" {len(shown)} of the {len(steps)} screens are shown, evenly spaced, the last included."
    parts = [_text(intro)]
    for number, chunk in enumerate(chunks, start=1):
        cells = [labelled_cell(frames[step], step, layout.cell) for step in chunk]
        parts += [_text(f"Mosaic {number} of {len(chunks)}: steps {chunk[0]} to {chunk[-1]}"),
                  image_part(png_bytes(tile(cells, layout.cols)))]
    return parts


def with_screens(con: duckdb.DuckDBPyConnection, requests: list, mode: VisualMode, layout: Mosaic) -> list:
    """The requests (ask.Request) with the screens of the states each one's log shows, built once per context."""
    built: dict[tuple, tuple[dict, ...]] = {}
    out = []
    for request in requests:
        batch = request.batch
        key = (batch.episode_id, batch.shown)
        if key not in built:
            if not EVALUATE_ENVIRONMENTS[batch.env].screens:
                raise UserError(f"--context {mode}: episode {batch.episode_id!r} is a {batch.env} episode; only "
                                "Crafter episodes have screens (ask its questions with a text context)")
            frames = episode_frames(con, batch.episode_id)
            built[key] = tuple(screen_parts(frames, sorted(batch.shown.states), mode.images, layout))
        out.append(dataclasses.replace(request, images=built[key]))
    return out


def _png(part: dict) -> bytes:
    return base64.b64decode(part["image_url"]["url"].partition(",")[2])


def image_size(part: dict) -> tuple[int, int]:
    """The width and height of an image part's picture."""
    from PIL import Image

    with Image.open(io.BytesIO(_png(part))) as image:
        return image.size


def image_tokens(width: int, height: int) -> int:
    """About how many prompt tokens a picture takes: OpenAI's high-detail rule."""
    fit = min(1.0, 2048 / max(width, height))
    width, height = width * fit, height * fit
    short = min(1.0, 768 / min(width, height))
    width, height = width * short, height * short
    return 85 + 170 * math.ceil(width / 512) * math.ceil(height / 512)


@dataclass(frozen=True)
class ImageCost:
    images: int
    bytes: int  # of the data URLs, as sent
    tokens: int  # estimated

    def __str__(self) -> str:
        return f"{self.images} image(s), {self.bytes / 1e6:.2f} MB as sent, about {self.tokens} tokens"


def image_cost(messages: list[dict]) -> ImageCost:
    """What the images of `messages` cost: how many, their bytes as sent and their estimated tokens."""
    parts = [part for m in messages if isinstance(m["content"], list)
             for part in m["content"] if part.get("type") == "image_url"]
    return ImageCost(len(parts), sum(len(part["image_url"]["url"]) for part in parts),
                     sum(image_tokens(*image_size(part)) for part in parts))


def describe(content: str | list[dict]) -> str:
    """A message's content as a dry run prints it: its text, each image as one line saying what it is."""
    if isinstance(content, str):
        return content
    lines = []
    for part in content:
        if part.get("type") == "image_url":
            width, height = image_size(part)
            lines.append(f"[image: {width} x {height} PNG, {len(part['image_url']['url']) / 1e3:.0f} KB as "
                         f"sent, about {image_tokens(width, height)} tokens]")
        else:
            lines.append(part["text"])
    return "\n".join(lines)
