# pycheck.py - vramfit's check of a config by the trainer's own config class
# (lib/trainer/pycheck.c writes this file to a temporary directory and runs
# it with the machine's python3 when that has pydantic 2 and PyYAML; it is
# never written into the checkout).
#
#   python3 -B pycheck.py SRC_ROOT MODULE CLASS CONFIG_YAML
#
# Imports MODULE (e.g. ltx_trainer.config) from SRC_ROOT (the checkout's src/)
# with the trainer's heavy dependencies (torch, diffusers, ...) and anything
# else the checkout imports that is not installed replaced by permissive stub
# modules, loads CONFIG_YAML with yaml.safe_load (as the trainer does) and
# validates it with CLASS. Output, one record a line, tab-separated:
#   VF-PY <python version> <pydantic version> <executable>
#   VF-ERR <loc, dotted> <pydantic error type> <message>   (one per error)
#   VF-OK | VF-FAIL                                         (the verdict)
# or, when it cannot give a verdict:
#   VF-NOPYDANTIC <why>   exit 5 (no pydantic 2 or no PyYAML here)
#   VF-NOIMPORT <why>     exit 4 (the module or class cannot be loaded)
#   VF-NOYAML <why>       exit 4 (the file is not YAML to PyYAML)
# Exit 0 with VF-OK, 3 with VF-FAIL.
import os
import sys

MAX_ERRORS = 64

# Always stubbed when the checkout imports them, even when installed: the
# config module needs only their names, and importing them costs seconds.
HEAVY = {
    "torch", "torchvision", "torchaudio", "diffusers", "transformers", "accelerate", "peft",
    "safetensors", "optimum", "bitsandbytes", "xformers", "flash_attn", "triton", "wandb",
    "huggingface_hub", "ltx_core", "ltx_pipelines", "ltx_video", "av", "cv2", "decord",
    "imageio", "imageio_ffmpeg", "PIL", "einops", "sentencepiece", "tokenizers", "deepspeed",
    "torchao", "liger_kernel", "qwen_vl_utils", "scipy", "sklearn", "pandas", "numpy", "rich",
    "typer", "tqdm", "mediapy", "kornia", "timm", "open_clip", "cupy",
}


def out(*fields):
    sys.stdout.write("\t".join(str(f).replace("\t", " ").replace("\n", " ") for f in fields) + "\n")


def give_up(tag, why, code):
    out(tag, why)
    sys.stdout.flush()
    sys.exit(code)


# ---- permissive stubs -------------------------------------------------------

class _StubMeta(type):
    """A stub class: any attribute is another stub class; it can be called,
    subclassed, indexed (Tensor[...]) and combined with | in annotations."""

    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub_class(cls.__name__ + "." + name)

    def __getitem__(cls, item):
        return cls

    def __iter__(cls):
        return iter(())

    def __len__(cls):
        return 0

    def __bool__(cls):
        return True


class _Stub(metaclass=_StubMeta):
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        # used as a decorator (@torch.no_grad()): give the function back
        if len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]
        return _Stub()

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _Stub()

    def __getitem__(self, item):
        return _Stub()

    def __iter__(self):
        return iter(())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _stub_class(name):
    return _StubMeta(name.rsplit(".", 1)[-1], (_Stub,), {"__module__": name.rsplit(".", 1)[0]})


class _StubModule(type(sys)):
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _stub_class(self.__name__ + "." + name)
        setattr(self, name, value)
        return value


class _StubLoader:
    def create_module(self, spec):
        m = _StubModule(spec.name)
        m.__path__ = []  # a package: its submodules are stubs too
        m.__all__ = []
        return m

    def exec_module(self, module):
        pass


class _StubFinder:
    """First on sys.meta_path. An import made from the checkout's own code
    (or below a module already stubbed) of a HEAVY module, or of any module
    the other finders cannot find, gets a stub; every other import (pydantic's
    own optional imports among them) goes on as usual."""

    def __init__(self, src_root):
        self.src_root = os.path.realpath(src_root) + os.sep
        self.stubbed = set()

    def _from_checkout(self):
        f = sys._getframe(2)
        while f is not None:
            name = f.f_code.co_filename
            if not name.startswith("<frozen") and "importlib" not in name and name != __file__:
                return os.path.realpath(name).startswith(self.src_root)
            f = f.f_back
        return False

    def find_spec(self, fullname, path=None, target=None):
        import importlib.machinery
        import importlib.util

        root = fullname.split(".", 1)[0]
        if root not in self.stubbed:
            if not self._from_checkout():
                return None
            if root not in HEAVY:
                for finder in sys.meta_path:
                    if finder is self or not hasattr(finder, "find_spec"):
                        continue
                    try:
                        if finder.find_spec(fullname, path, target) is not None:
                            return None
                    except (ImportError, ValueError):
                        pass
            self.stubbed.add(root)
        return importlib.util.spec_from_loader(fullname, _StubLoader(), is_package=True)


# ---- the check ----------------------------------------------------------------

def main():
    if len(sys.argv) != 5:
        give_up("VF-NOIMPORT", "usage: pycheck.py SRC_ROOT MODULE CLASS CONFIG_YAML", 2)
    src_root, module, cls_name, config = sys.argv[1:5]
    try:
        import pydantic
        import yaml
        from pydantic import ValidationError
    except ImportError as e:
        give_up("VF-NOPYDANTIC", "cannot import %s" % (getattr(e, "name", None) or e), 5)
    version = getattr(pydantic, "VERSION", getattr(pydantic, "__version__", "0"))
    if not str(version).split(".")[0].isdigit() or int(str(version).split(".")[0]) < 2:
        give_up("VF-NOPYDANTIC", "pydantic %s is not pydantic 2" % version, 5)
    out("VF-PY", "%d.%d.%d" % sys.version_info[:3], version, sys.executable)

    sys.dont_write_bytecode = True
    sys.path.insert(0, src_root)
    sys.meta_path.insert(0, _StubFinder(src_root))
    import importlib

    try:
        cls = getattr(importlib.import_module(module), cls_name)
    except SyntaxError as e:
        give_up("VF-NOIMPORT", "%s:%s: %s" % (e.filename, e.lineno, e.msg), 4)
    except BaseException as e:  # noqa: BLE001 - any failure to import is reported, never raised
        give_up("VF-NOIMPORT", "importing %s.%s: %s: %s" % (module, cls_name, type(e).__name__, e), 4)
    if not hasattr(cls, "model_validate"):
        give_up("VF-NOIMPORT", "%s.%s is not a pydantic 2 model" % (module, cls_name), 4)
    try:
        with open(config, encoding="utf-8") as f:
            data = yaml.safe_load(f)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        give_up("VF-NOYAML", "%s" % e, 4)
    try:
        cls.model_validate(data)
    except ValidationError as e:
        errors = e.errors()
        for x in errors[:MAX_ERRORS]:
            out("VF-ERR", ".".join(str(p) for p in x.get("loc", ())), x.get("type", ""), x.get("msg", ""))
        out("VF-FAIL")
        sys.stdout.flush()
        sys.exit(3)
    except Exception as e:  # noqa: BLE001 - a validator that raises something else
        out("VF-ERR", "", type(e).__name__, "%s: %s" % (type(e).__name__, e))
        out("VF-FAIL")
        sys.stdout.flush()
        sys.exit(3)
    out("VF-OK")


main()
