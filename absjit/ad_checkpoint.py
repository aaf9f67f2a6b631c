"""Rematerialisation (``jax.ad_checkpoint``): ``checkpoint``/``remat``, the policy
names, and ``checkpoint_name``.

absjit's :func:`checkpoint` keeps only the function's inputs for the backward pass and
recomputes everything else, whatever the policy: the policies below exist so code
written for JAX runs, and each gives the same values and gradients as in JAX (only how
much is recomputed differs). ``checkpoint_name`` is the identity.

Examples
--------
>>> import absjit, absjit.numpy as jnp
>>> from absjit.ad_checkpoint import checkpoint, checkpoint_policies
>>> f = checkpoint(lambda x: jnp.sin(x) * 2, policy=checkpoint_policies.dots_saveable)
>>> float(absjit.grad(f)(0.0))
2.0
"""
from __future__ import annotations

import types

from .api_utils import checkpoint, remat

__all__ = ["checkpoint", "remat", "checkpoint_policies", "checkpoint_name"]


def checkpoint_name(x, name: str):
    """``x`` itself, tagged ``name`` for JAX's name-based policies (absjit: no effect).

    Examples
    --------
    >>> from absjit.ad_checkpoint import checkpoint_name
    >>> checkpoint_name(3.0, "h")
    3.0
    """
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: name must be a string, got {name!r}")
    return x


def _policy(name, saves):
    def policy(prim, *avals, **params) -> bool:
        return saves(prim, params)
    policy.__name__ = policy.__qualname__ = name
    policy.__doc__ = f"JAX's ``{name}`` policy (absjit saves only the inputs)."
    return policy


def _is_dot(prim, params):
    return getattr(prim, "name", "") == "dot_general"


def _names_policy(kind):
    def make(*names):
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"{kind}: names must be strings, got {n!r}")
        return _policy(kind, lambda prim, params: False)
    make.__name__ = kind
    return make


def _save_from_both_policies(policy_1, policy_2):
    if not (callable(policy_1) and callable(policy_2)):
        raise TypeError("save_from_both_policies: expected two policies")
    return _policy("save_from_both_policies",
                   lambda prim, params: policy_1(prim, **params) or policy_2(prim, **params))


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=_policy("everything_saveable", lambda prim, params: True),
    nothing_saveable=_policy("nothing_saveable", lambda prim, params: False),
    dots_saveable=_policy("dots_saveable", _is_dot),
    checkpoint_dots=_policy("checkpoint_dots", _is_dot),
    dots_with_no_batch_dims_saveable=_policy("dots_with_no_batch_dims_saveable", _is_dot),
    checkpoint_dots_with_no_batch_dims=_policy("checkpoint_dots_with_no_batch_dims", _is_dot),
    save_only_these_names=_names_policy("save_only_these_names"),
    save_any_names_but_these=_names_policy("save_any_names_but_these"),
    save_anything_except_these_names=_names_policy("save_anything_except_these_names"),
    save_from_both_policies=_save_from_both_policies,
)
