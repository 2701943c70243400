"""Images, audio and files as input values: `Image`, `Audio`, `File`.

Sources. Each value is made from an ``http(s)`` URL (kept as a URL, never fetched unless
``from_url(..., download=True)``), a ``data:`` URI (checked, MIME type read from it), a local
path, raw bytes, or another media value. Bytes are kept as a base64 data URI, which is what
the OpenAI content parts carry, so a value is encoded once and never decoded unless `data`
is read. The MIME type comes from ``mime_type=``, else the magic bytes, else the file name;
`Image` and `Audio` refuse data of another kind, `File` takes any type.

Limits. Inline data is capped per class (`Image` 20 MiB, `Audio` 25 MiB, `File` 32 MiB;
``max_bytes=`` per value): checked before a file is read, while a download streams, and for a
data URI from its base64 length, so an oversized value fails before it is copied around.

Markers. Prompts are rendered as text, so a value is put into that text as a marker
(``<<structio-media:KEY>>``, from `marker`, ``str(value)`` or ``f"{value}"``) that survives
``json.dumps`` unchanged; `split_markers` then turns the rendered text into OpenAI content
parts, text between the values. The registry that maps keys back to values holds them
weakly: render and send while the values are alive. Pydantic JSON serialization gives
`Media.to_json` data, or markers inside ``with markers():`` (how a model holding an image is
rendered).

Every error about a value is a `structio.exceptions.MediaError` that names the source (a data
URI clipped to its first characters) and says what to do.
"""

from structio.media.base import Media, marker
from structio.media.base import _restore as _restore  # pickles made before the split name it here
from structio.media.kinds import Audio, File, Image
from structio.media.markers import _REGISTRY as _REGISTRY
from structio.media.markers import (
    MARKER_PREFIX,
    has_markers,
    is_media_part,
    markers,
    split_markers,
)

__all__ = [
    "Audio",
    "File",
    "Image",
    "MARKER_PREFIX",
    "Media",
    "has_markers",
    "is_media_part",
    "marker",
    "markers",
    "split_markers",
]
