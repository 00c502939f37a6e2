// Textual pipelines: nesting, options, named pipelines, one flag per pass,
// and clear errors for bad pipelines.
// RUN: ipu-opt --dump-pass-pipeline --pass-pipeline='builtin.module(func.func(canonicalize{max-iterations=3},cse),symbol-dce)' %s 2>&1 >/dev/null | FileCheck %s --check-prefix=DUMP
// RUN: ipu-opt --dump-pass-pipeline --cse --canonicalize='max-iterations=2' %s 2>&1 >/dev/null | FileCheck %s --check-prefix=FLAGS
// RUN: ipu-opt --dump-pass-pipeline --ipu-cleanup %s 2>&1 >/dev/null | FileCheck %s --check-prefix=NAMED
// RUN: ipu-opt --dump-pass-pipeline --pass-pipeline='builtin.module(any(cse))' %s 2>&1 >/dev/null | FileCheck %s --check-prefix=ANY
// RUN: not ipu-opt --pass-pipeline='builtin.module(nope)' %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not ipu-opt --pass-pipeline='builtin.module(cse{bogus=1})' %s 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not ipu-opt --pass-pipeline='builtin.module(func.func(cse)' %s 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not ipu-opt --canonicalize='max-iterations=x' %s 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: not ipu-opt --pass-pipeline='builtin.module(cse)' --cse %s 2>&1 | FileCheck %s --check-prefix=BOTH

// DUMP: Pass Manager with builtin.module(func.func(canonicalize{max-iterations=3},cse),symbol-dce)
// FLAGS: Pass Manager with builtin.module(cse,canonicalize{max-iterations=2})
// NAMED: Pass Manager with builtin.module(canonicalize,cse,symbol-dce)
// ANY: Pass Manager with builtin.module(any(cse))
// UNKNOWN: ipu-opt: 'nope' does not refer to a registered pass or pass pipeline
// OPTION: ipu-opt: no such option 'bogus' for pass 'cse' (options: none)
// SYNTAX: ipu-opt: invalid pass pipeline 'builtin.module(func.func(cse)' at column 30: expected ')'
// VALUE: ipu-opt: pass 'canonicalize': invalid value 'x' for option 'max-iterations': expected an unsigned integer
// BOTH: ipu-opt: '--pass-pipeline' cannot be used with individual pass options

func.func @f() {
  return
}
