# `pip install --no-build-isolation .`: the positionlab Python module, built by CMake (the release preset's build/,
# reused when it exists) and installed as a package, with Debian's setuptools and wheel (no PyPI; docs/python.md).
import os
import re
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("POSITIONLAB_BUILD_DIR", os.path.join(ROOT, "build"))


def project_version():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        return re.search(r"project\(PositionLab VERSION ([0-9.]+)", f.read()).group(1)


class CMakeBuild(build_ext):
    """Builds the CMake targets of the compiled modules and copies them where setuptools packs extensions."""

    def run(self):
        if not os.path.exists(os.path.join(BUILD, "CMakeCache.txt")):
            subprocess.check_call(["cmake", "--preset", "release", "-DPOSITIONLAB_BUILD_PYTHON=ON"], cwd=ROOT)
        with open(os.path.join(BUILD, "CMakeCache.txt"), encoding="utf-8") as f:
            gui = "POSITIONLAB_BUILD_GUI:BOOL=ON" in f.read()
        targets = ["positionlab_python"] + (["positionlab_python_render"] if gui else [])
        subprocess.check_call(["cmake", "--build", BUILD, "--target", *targets], cwd=ROOT)
        super().run()

    def build_extension(self, ext):
        built = os.path.join(BUILD, "python", "positionlab")
        stem = ext.name.split(".")[-1]  # _core or _render
        names = [n for n in os.listdir(built) if n.startswith(stem + ".") and n.endswith(".so")]
        if not names:
            if stem == "_render":
                return  # a build without the GUI library: render() says so when called
            raise RuntimeError("no %s module in %s" % (stem, built))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(built, names[0]), target)


setup(
    name="positionlab",
    version=project_version(),
    description="PositionLab's core (positional encodings, the fused attention kernel, Hugging Face folders) as NumPy "
                "functions",
    packages=["positionlab"],
    package_dir={"positionlab": "python/positionlab"},
    ext_modules=[Extension("positionlab._core", sources=[]), Extension("positionlab._render", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": os.path.join(BUILD, "setuptools")}, "egg_info": {"egg_base": BUILD}},
    python_requires=">=3.9",
)
