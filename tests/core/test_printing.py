"""The seeds' make_jaxpr cells print exactly what the seeds show."""
import numpy as np

import absjit
import absjit.numpy as jnp
from absjit.core.pretty import _encode_name


def test_seed_log2_and_side_effects():
    global_list = []

    def log2(x):
        global_list.append(x)
        ln_x = jnp.log(x)
        ln_2 = jnp.log(2.0)
        return ln_x / ln_2

    expected = ("{ lambda ; a:f32[]. let\n"
                "    b:f32[] = log a\n"
                "    c:f32[] = log 2.0\n"
                "    d:f32[] = div b c\n"
                "  in (d,) }")
    assert str(absjit.make_jaxpr(log2)(3.0)) == expected
    assert len(global_list) == 1  # the side effect ran once, during tracing


def test_seed_print_shows_tracer(capsys):
    def log2_with_print(x):
        print("printed x:", x)
        return jnp.log(x) / jnp.log(2.0)

    absjit.make_jaxpr(log2_with_print)(3.)
    out = capsys.readouterr().out
    assert out == ("printed x: Traced<ShapedArray(float32[], weak_type=True)>"
                   "with<DynamicJaxprTrace(level=1/0)>\n")


def test_seed_empty_body():
    def log2_if_rank_2(x):
        if x.ndim == 2:
            return jnp.log(x) / jnp.log(2.0)
        return x

    out = absjit.make_jaxpr(log2_if_rank_2)(jnp.array([1, 2, 3]))
    assert str(out) == "{ lambda ; a:i32[3]. let  in (a,) }"


def test_seed_one_line_relu():
    def myrelu(x):
        return jnp.maximum(0., x)
    assert str(absjit.make_jaxpr(myrelu)(5.)) == \
        "{ lambda ; a:f32[]. let b:f32[] = max 0.0 a in (b,) }"


def test_params_and_constvars():
    c = np.arange(3.0)
    jaxpr = absjit.make_jaxpr(lambda x: x ** 2 + c)(jnp.ones(3))
    text = str(jaxpr)
    assert text.startswith("{ lambda a:f32[3]; b:f32[3]. let")
    assert "integer_pow[y=2] b" in text


def test_variable_names_continue_past_z():
    assert [_encode_name(i) for i in (0, 1, 25, 26, 27, 51, 52)] == \
        ["a", "b", "z", "ba", "bb", "bz", "ca"]

    def many(x):
        for _ in range(30):
            x = jnp.sin(x)
        return x
    text = str(absjit.make_jaxpr(many)(1.0))
    assert "ba:f32[] = sin z" in text


def test_make_jaxpr_static_argnums_and_unhashable():
    def f(x, n):
        return x * n
    text = str(absjit.make_jaxpr(f, static_argnums=1)(1.0, 3))
    assert "mul a 3" in text
    import pytest
    with pytest.raises(ValueError, match="hashable"):
        absjit.make_jaxpr(f, static_argnums=1)(1.0, [3])
