"""The core: abstract values and levels, primitives, tracing, the jaxpr IR."""
from .avals import (AbstractValue, ConcreteArray, RankedArray, ShapedArray, StaticArg,
                    raise_to_shaped)
from .dims import Dim, dim_max, dim_min
from .jaxpr import (ClosedJaxpr, Jaxpr, JaxprEqn, JaxprTypeError, Literal, Var, eval_jaxpr,
                    jaxpr_as_fun, typecheck)
from .levels import (ConcreteLevel, Level, RankedLevel, ShapedLevel, StaticLevel, get_level,
                     register_level, registered_levels)
from .primitive import Primitive, abstract_eval_rules, impl_rules
from .trace import (EvalTrace, MainTrace, Trace, Tracer, bind, find_top_trace, get_aval,
                    new_main, to_numpy)
from . import dim_value  # noqa: F401,E402  (registers the primitive Dim.value binds)
