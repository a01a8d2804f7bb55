"""The `embed` provider: per question, the `k` steps observed so far whose text is nearest to the
question's by the cosine of their embeddings, from an OpenAI-compatible `/v1/embeddings` endpoint.

Each text is embedded once: vectors are kept on disk (EmbeddingCache, a DuckDB file) by the embedding
model and the SHA-256 of the text, and a step's text is the same in every run over the same trace, so a
rerun, another QA set or another horizon over the same episodes sends nothing again. Steps are embedded
when a question is first asked after they arrive, in requests of `batch` texts.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from qtc.errors import UserError
from qtc.runtime.arrow import arrow_rows
from qtc.runtime.chat import ChatClient

from .builtin import best, positive_int
from .protocol import RetrievalProvider


def default_cache() -> Path:
    """$XDG_CACHE_HOME/qtc/embeddings.duckdb (~/.cache when the variable is unset)."""
    root = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(root) / "qtc" / "embeddings.duckdb"


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Vectors by (model, SHA-256 of the text), in a DuckDB file that one process at a time may hold."""

    def __init__(self, path: Path):
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._con = duckdb.connect(str(path))
        except duckdb.Error as error:
            raise UserError(f"{path}: cannot open the embedding cache ({error}); is another run using it?") from None
        self._con.execute("CREATE TABLE IF NOT EXISTS embeddings (model VARCHAR, text_sha256 VARCHAR, "
                          "vector FLOAT[], PRIMARY KEY (model, text_sha256))")

    def get(self, model: str, keys: list[str]) -> dict[str, np.ndarray]:
        """The vectors of those of `keys` the cache holds (read as Arrow: no Python float per element)."""
        self._con.register("wanted_keys", pa.table({"text_sha256": pa.array(keys, pa.string())}))
        try:
            found = arrow_rows(self._con, "SELECT e.text_sha256, e.vector FROM embeddings e JOIN wanted_keys w "
                                          "USING (text_sha256) WHERE e.model = ?", [model])
        finally:
            self._con.unregister("wanted_keys")
        if not found.num_rows:
            return {}
        vectors = found["vector"].combine_chunks()
        matrix = vectors.flatten().to_numpy(zero_copy_only=False).reshape(found.num_rows, -1)
        return dict(zip(found["text_sha256"].to_pylist(), matrix))

    def put(self, model: str, vectors: dict[str, list[float]]) -> None:
        new = pa.table({"model": [model] * len(vectors), "text_sha256": list(vectors),
                        "vector": pa.array(list(vectors.values()), pa.list_(pa.float32()))})
        self._con.register("new_vectors", new)
        try:
            self._con.execute("INSERT OR IGNORE INTO embeddings SELECT * FROM new_vectors")
        finally:
            self._con.unregister("new_vectors")


class EmbedProvider(RetrievalProvider):
    """Options: `model` (the embedding model, required), `base_url` (default: `--base-url`), `k` (10),
    `cache` (a DuckDB file, default default_cache()), `batch` (texts a request, 64)."""

    def __init__(self, model: str | None = None, base_url: str | None = None, k: str = "10",
                 cache: str | None = None, batch: str = "64", timeout: float = 120.0, attempts: int = 6):
        if not model:
            raise UserError("--memory embed needs the embedding model: --memory-option model=NAME")
        self.k = positive_int("k", k)
        self.batch = positive_int("batch", batch)
        self.client = ChatClient(model, base_url, timeout=timeout, attempts=attempts)
        self.cache = EmbeddingCache(Path(cache) if cache else default_cache())

    def reset(self, episode: dict) -> None:
        super().reset(episode)
        self._vectors = np.zeros((0, 0), dtype=np.float32)  # one unit row per step embedded

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of `texts`, from the cache or else the endpoint (and then kept)."""
        keys = [text_key(t) for t in texts]
        found = self.cache.get(self.client.model, list(set(keys)))
        missing = list(dict.fromkeys((k, t) for k, t in zip(keys, texts) if k not in found))
        for start in range(0, len(missing), self.batch):
            chunk = missing[start:start + self.batch]
            vectors = self.client.embeddings([t for _, t in chunk])
            self.cache.put(self.client.model, {k: v for (k, _), v in zip(chunk, vectors)})
            found.update({k: np.asarray(v, dtype=np.float32) for (k, _), v in zip(chunk, vectors)})
        matrix = np.stack([found[k] for k in keys]) if keys else np.zeros((0, 0), dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / np.where(norms == 0, 1, norms)

    def index(self) -> np.ndarray:
        """The unit vectors of every step observed, embedding those that arrived since the last call."""
        new = self.steps[len(self._vectors):]
        if new:
            vectors = self.embed([s["text"] for s in new])
            self._vectors = vectors if not len(self._vectors) else np.vstack([self._vectors, vectors])
        return self._vectors

    def retrieve(self, question: dict) -> list[int]:
        if not self.steps:
            return []
        scores = self.index() @ self.embed([question["question"]])[0]
        return [self.steps[i]["step"] for i in best(scores, self.k)]
