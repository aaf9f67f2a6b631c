"""``absjit.lax``: the strict primitive API.

No implicit promotion: ``lax.add(1, 1.0)`` raises ``TypeError: lax.add requires
arguments to have the same dtypes, got int32, float32``. Most functions bind one
primitive (or a few, for conveniences like ``lax.select``), defined with all its rules
in an ``absjit.ops`` module, which lists its public functions (and ``*_p`` primitives)
in ``__all__``. The others are composites written here on those primitives and define
none: windowed reductions (``_windowed``), transposed convolutions
(``_conv_transpose``), ``erf``/``lgamma``/``digamma`` (``_erf_gamma``), the other special
functions (``_special``) and the rest of JAX's ``lax`` (``_extra``).
"""
from __future__ import annotations

from ..ops.elementwise import *  # noqa: F401,F403
from ..ops.structural import *  # noqa: F401,F403
from ..ops.indexing import *  # noqa: F401,F403
from ..ops.reductions import *  # noqa: F401,F403
from ..ops.linalg import *  # noqa: F401,F403
from ..ops.conv import *  # noqa: F401,F403
from ..ops.sorting import *  # noqa: F401,F403
from ..ops.control_flow import *  # noqa: F401,F403
from ..ops.linear_solve import *  # noqa: F401,F403
from ._windowed import *  # noqa: F401,F403
from ..ops.fft import *  # noqa: F401,F403
from ._conv_transpose import *  # noqa: F401,F403

# Aliases JAX's lax offers too.
from ..ops.elementwise import bitwise_and as and_, bitwise_not as not_  # noqa: E402,F401
from ..ops.elementwise import bitwise_or as or_, bitwise_xor as xor  # noqa: E402,F401
from ._erf_gamma import *  # noqa: F401,F403,E402
from ..ops.collectives import *  # noqa: F401,F403,E402
from ._extra import *  # noqa: F401,F403,E402
from ._special import *  # noqa: F401,F403,E402
from . import _extra as _lax_extra, _special as _lax_special  # noqa: E402
from . import _windowed, _conv_transpose, _erf_gamma  # noqa: E402

from ..ops import (conv as _conv, control_flow as _control_flow,  # noqa: E402
                   elementwise as _elementwise, indexing as _indexing, linalg as _linalg,
                   reductions as _reductions, sorting as _sorting, structural as _structural,
                   fft as _fft, collectives as _collectives, linear_solve as _linear_solve)

# The public names: each module's ``__all__`` and the aliases above (so helpers
# imported for internal use, like ``annotations``, never leak).
__all__ = sorted({name for m in (_elementwise, _structural, _indexing, _reductions, _linalg,
                                 _conv, _sorting, _control_flow, _windowed, _fft,
                                 _conv_transpose, _erf_gamma, _collectives, _lax_extra,
                                 _lax_special, _linear_solve)
                  for name in m.__all__} | {"and_", "not_", "or_", "xor"})

from . import linalg  # noqa: E402,F401  (absjit.lax.linalg: the matrix decompositions)
