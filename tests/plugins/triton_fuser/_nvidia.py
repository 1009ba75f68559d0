"""Lowering a kernel to Triton IR for an sm_90 GPU with Triton's own front end (no GPU
needed): what the compile checks of the fuser tests share."""
import os
import subprocess
import sys


def nvidia_ttir(fn, signature: dict, constexprs: dict):
    """``fn`` (a JITFunction) lowered to Triton IR for sm_90 with FMA contraction off;
    ``signature`` maps each parameter to its type (``"*fp32"``, ``"i32"``,
    ``"constexpr"``). Raises Triton's CompilationError for source it rejects."""
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import ASTSource, make_backend
    target = GPUTarget("cuda", 90, 32)
    backend = make_backend(target)
    options = backend.parse_options({"enable_fp_fusion": False})
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    src = ASTSource(fn, signature, constexprs=constexprs)
    return src.make_ir(target, options, backend.get_codegen_implementation(options),
                       backend.get_module_map(), context)


def run_without_interpreter(test_file: str, test_name: str, count: int) -> None:
    """Run ``test_file::test_name`` in a fresh pytest process with ``TRITON_INTERPRET=0``
    (this process switched the interpreter on before importing Triton: conftest.py) and
    assert that its ``count`` cases passed."""
    env = {**os.environ, "TRITON_INTERPRET": "0"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-q",
                          "--import-mode=importlib", "-p", "no:cacheprovider",
                          f"{test_file}::{test_name}"], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert f"{count} passed" in run.stdout, run.stdout[-2000:]
