"""Primitives by family, each with all its rules beside its definition; and the
segment reductions of ``jax.ops`` (``absjit.ops.segment_sum`` …), built on scatter."""
from . import elementwise, structural, reductions, linalg, conv, sorting, control_flow  # noqa: F401
from . import indexing  # noqa: F401,E402
from . import linalg_decomp, linalg_spectral, linalg_schur  # noqa: F401,E402
from . import call  # noqa: F401,E402
from . import shape_values  # noqa: F401,E402
from . import fma  # noqa: F401,E402
from . import threefry  # noqa: F401,E402
from .segment import segment_max, segment_min, segment_prod, segment_sum  # noqa: F401,E402
