"""``astjax.scipy.cluster.vq``, as ``jax.scipy.cluster.vq``: ``vq`` in ``astjax.numpy``."""
import astjax.numpy as jnp
from astjax._src.random.checks import static_helper  # evaluated while generating code
from astjax.numpy._composites import _inexact2

__all__ = ["vq"]


@static_helper
def _check(obs_ndim, book_ndim):
    if obs_ndim != book_ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs_ndim not in (1, 2):
        raise ValueError("ndim different than 1 or 2 are not supported")
    return obs_ndim


def vq(obs, code_book, check_finite=True):
    """(code, dist): for each observation (a row of ``obs``, or an element of a 1-D one) the
    index of the nearest code in ``code_book`` and the Euclidean distance to it."""
    obs, code_book = _inexact2(obs, code_book)
    dtype = jnp.result_type(obs, code_book)
    obs = obs.astype(dtype)
    code_book = code_book.astype(dtype)
    if _check(obs.ndim, code_book.ndim) == 1:
        obs = obs[:, None]
        code_book = code_book[:, None]
    diff = obs[:, None, :] - code_book[None, :, :]
    dist = jnp.linalg.norm(diff, axis=-1)
    code = jnp.argmin(dist, axis=-1)
    return code, jnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
