"""scripts/api_list.py: the API list in docs/api-list.md is generated from the modules."""
import importlib.util
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(__file__))
spec = importlib.util.spec_from_file_location("api_list", os.path.join(ROOT, "scripts",
                                                                      "api_list.py"))
api_list = importlib.util.module_from_spec(spec)
spec.loader.exec_module(api_list)


def test_render_lists_each_module_with_computed_counts():
    text = api_list.render()
    sections = dict(re.findall(r"^\*\*([\w.]+)\*\* \((\d+)\): ", text, flags=re.M))
    for name in ["absjit", "absjit.numpy", "absjit.numpy.linalg", "absjit.lax",
                 "absjit.random", "absjit.nn", "absjit.nn.initializers", "absjit.tree",
                 "absjit.example_libraries.optimizers", "absjit.example_libraries.stax"]:
        assert name in sections, name
    for line in text.splitlines():
        m = re.match(r"^\*\*([\w.]+)\*\* \((\d+)\): (.*)$", line)
        if m:
            assert int(m.group(2)) == len(m.group(3).split(", "))
    assert "`annotations`" not in text
    assert "`add_p`" not in text and "`numpy`" not in text.split("\n")[0]
    assert int(sections["absjit.numpy"]) == len(api_list.public_names("absjit.numpy"))


def test_no_module_leaks_future_annotations():
    import absjit.lax
    import absjit.numpy
    for mod in (absjit, absjit.numpy, absjit.lax, absjit.nn, absjit.tree, absjit.tree_util,
                absjit.random, absjit.numpy.linalg, absjit.debug):
        assert "annotations" not in mod.__all__, mod.__name__
        assert all(hasattr(mod, n) for n in mod.__all__), mod.__name__
    namespace = {}
    exec("from absjit.numpy import *", namespace)  # noqa: S102
    assert "annotations" not in namespace and "pad" in namespace


def test_check_and_write(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text(f"# T\n\n{api_list.START}\nold list\n{api_list.END}\n\nafter\n")
    assert api_list.main(["--check", str(readme)]) == 1
    assert api_list.main(["--write", str(readme)]) == 0
    assert api_list.main(["--check", str(readme)]) == 0
    content = readme.read_text()
    assert content.startswith("# T\n\n") and content.endswith(f"{api_list.END}\n\nafter\n")
    assert "old list" not in content
    readme.write_text("no markers\n")
    with pytest.raises(SystemExit, match="api-list:start"):
        api_list.main(["--check", str(readme)])
