//! Small valid `nn` programs from fuzz bytes: a few elementwise ops, casts
//! (FP8 ones saturating, with a power-of-two scale), matmuls and the layout
//! ops, over tensors of at most [`MAX_ELEMS`] elements. Every op's result
//! type follows the reference's type rules, so the program verifies.

/// Most elements of any value.
pub const MAX_ELEMS: usize = 256;
/// Most ops in a program.
pub const MAX_OPS: usize = 8;

/// Reads choices from the fuzz bytes; zeros once they run out.
pub struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Bytes<'a> {
        Bytes { data, at: 0 }
    }

    pub fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        self.byte() as usize % n
    }

    /// A number in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    pub fn exhausted(&self) -> bool {
        self.at >= self.data.len()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    F32,
    F16,
    Bf16,
    F8E4M3,
    F8E5M2,
}

impl Dtype {
    fn mlir(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
            Dtype::F8E4M3 => "f8E4M3FN",
            Dtype::F8E5M2 => "f8E5M2",
        }
    }

    fn is_fp8(self) -> bool {
        matches!(self, Dtype::F8E4M3 | Dtype::F8E5M2)
    }
}

#[derive(Clone, Debug)]
struct Value {
    name: String,
    shape: Vec<usize>,
    dtype: Dtype,
}

fn ty(shape: &[usize], dtype: Dtype) -> String {
    let mut s = String::from("tensor<");
    for d in shape {
        s.push_str(&format!("{d}x"));
    }
    s.push_str(dtype.mlir());
    s.push('>');
    s
}

impl Value {
    fn ty(&self) -> String {
        ty(&self.shape, self.dtype)
    }
}

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

fn ints(v: impl IntoIterator<Item = i64>) -> String {
    let v: Vec<String> = v.into_iter().map(|x| x.to_string()).collect();
    format!("array<i64: {}>", v.join(", "))
}

struct Builder<'b, 'a> {
    b: &'b mut Bytes<'a>,
    args: Vec<Value>,
    /// Values defined by ops, in order.
    values: Vec<Value>,
    body: String,
}

impl Builder<'_, '_> {
    fn fresh_shape(&mut self) -> Vec<usize> {
        let rank = self.b.range(1, 3);
        let mut shape: Vec<usize> = (0..rank).map(|_| self.b.range(1, 8)).collect();
        while numel(&shape) > MAX_ELEMS {
            let i = shape
                .iter()
                .enumerate()
                .max_by_key(|(_, d)| **d)
                .map_or(0, |(i, _)| i);
            shape[i] = shape[i].div_ceil(2);
        }
        shape
    }

    fn host_dtype(&mut self) -> Dtype {
        match self.b.below(8) {
            0..=3 => Dtype::F32,
            4..=6 => Dtype::F16,
            _ => Dtype::Bf16,
        }
    }

    fn arg(&mut self, shape: Vec<usize>, dtype: Dtype) -> Value {
        let v = Value {
            name: format!("a{}", self.args.len()),
            shape,
            dtype,
        };
        self.args.push(v.clone());
        v
    }

    /// An existing value (an op's result or an argument), or a new argument.
    fn operand(&mut self) -> Value {
        let all = self.values.len() + self.args.len();
        let pick = self.b.below(all + 1);
        if pick < self.values.len() {
            self.values[self.values.len() - 1 - pick].clone()
        } else if pick < all {
            self.args[pick - self.values.len()].clone()
        } else {
            let (s, d) = (self.fresh_shape(), self.host_dtype());
            self.arg(s, d)
        }
    }

    /// A value of `dtype` and `shape`: an existing one, or a new argument
    /// (FP8: a new argument cast to it).
    fn operand_like(&mut self, shape: &[usize], dtype: Dtype) -> Value {
        let found: Vec<Value> = self
            .values
            .iter()
            .chain(&self.args)
            .filter(|v| v.shape == shape && v.dtype == dtype)
            .cloned()
            .collect();
        if !found.is_empty() && self.b.below(2) == 0 {
            let i = self.b.below(found.len());
            return found[i].clone();
        }
        if dtype.is_fp8() {
            let src = self.arg(shape.to_vec(), Dtype::F32);
            return self.cast_to(&src, dtype);
        }
        self.arg(shape.to_vec(), dtype)
    }

    fn define(&mut self, shape: Vec<usize>, dtype: Dtype, text: String) -> Value {
        let v = Value {
            name: format!("v{}", self.values.len()),
            shape,
            dtype,
        };
        self.body.push_str(&format!("  %{} = {text}\n", v.name));
        self.values.push(v.clone());
        v
    }

    fn cast_to(&mut self, x: &Value, to: Dtype) -> Value {
        let attrs = if to.is_fp8() {
            let scale = self.b.range(0, 6) as i64 - 3;
            format!(" {{saturate, scale = {scale}}}")
        } else {
            String::new()
        };
        let text = format!(
            "nn.cast %{}{attrs} : {} -> {}",
            x.name,
            x.ty(),
            ty(&x.shape, to)
        );
        self.define(x.shape.clone(), to, text)
    }

    fn unary(&mut self, x: &Value) -> Value {
        const OPS: [&str; 15] = [
            "relu",
            "neg",
            "abs",
            "exp",
            "tanh",
            "sigmoid",
            "gelu",
            "erf",
            "sqrt",
            "rsqrt",
            "reciprocal",
            "log",
            "relu",
            "neg",
            "abs",
        ];
        let op = OPS[self.b.below(OPS.len())];
        let text = format!("nn.{op} %{} : {}", x.name, x.ty());
        self.define(x.shape.clone(), x.dtype, text)
    }

    /// A shape that broadcasts with `shape` to `shape`: a suffix of it, with
    /// some dimensions set to 1.
    fn broadcastable_to(&mut self, shape: &[usize]) -> Vec<usize> {
        let keep = self
            .b
            .range(if shape.is_empty() { 0 } else { 1 }, shape.len());
        shape[shape.len() - keep..]
            .iter()
            .map(|&d| if self.b.below(3) == 0 { 1 } else { d })
            .collect()
    }

    fn binary(&mut self, x: &Value) -> Value {
        const OPS: [&str; 6] = ["add", "sub", "mul", "div", "max", "min"];
        let op = OPS[self.b.below(OPS.len())];
        let other = if self.b.below(2) == 0 {
            x.shape.clone()
        } else {
            self.broadcastable_to(&x.shape)
        };
        let y = self.operand_like(&other, x.dtype);
        let (a, b) = if self.b.below(4) == 0 {
            (&y, x)
        } else {
            (x, &y)
        };
        let text = format!(
            "nn.{op} %{}, %{} : ({}, {}) -> {}",
            a.name,
            b.name,
            a.ty(),
            b.ty(),
            x.ty()
        );
        self.define(x.shape.clone(), x.dtype, text)
    }

    fn cast(&mut self, x: &Value) -> Value {
        let to = match self.b.below(10) {
            0..=2 => Dtype::F32,
            3..=5 => Dtype::F16,
            6 => Dtype::Bf16,
            7 | 8 => Dtype::F8E4M3,
            _ => Dtype::F8E5M2,
        };
        self.cast_to(x, to)
    }

    fn matmul(&mut self, x: &Value) -> Value {
        // Mostly what the device's GEMM takes (2-D, f16 or FP8 operands, K
        // and N multiples of 16); sometimes x as it is, for the diagnostics.
        let device_shaped = self.b.below(4) != 0;
        let x = if device_shaped {
            let k = 16 * self.b.range(1, 2);
            let fits = x.shape.len() == 2
                && x.shape[1] == k
                && matches!(x.dtype, Dtype::F16 | Dtype::F8E4M3 | Dtype::F8E5M2);
            if fits {
                x.clone()
            } else {
                let m = self.b.range(1, 8);
                let d = [Dtype::F16, Dtype::F16, Dtype::F8E4M3, Dtype::F8E5M2][self.b.below(4)];
                self.operand_like(&[m, k], d)
            }
        } else {
            x.clone()
        };
        // The right operand is a weight of x's type or, for a float x, an FP8 one.
        let k = *x.shape.last().unwrap_or(&1);
        let n = if device_shaped {
            16 * self.b.range(1, 2)
        } else {
            self.b.range(1, 8)
        };
        let wtype = match (x.dtype, self.b.below(4)) {
            (d, 0) if !d.is_fp8() => Dtype::F8E4M3,
            (d, 1) if !d.is_fp8() => Dtype::F8E5M2,
            (d, _) => d,
        };
        let w = self.operand_like(&[k, n], wtype);
        let out = match (x.dtype, w.dtype) {
            (a, b) if a.is_fp8() && b.is_fp8() => Dtype::F16,
            (a, _) if a.is_fp8() => w.dtype,
            (a, _) => a,
        };
        let mut shape = x.shape.clone();
        let last = shape.len() - 1;
        shape[last] = n;
        if x.shape.len() == 1 {
            shape = vec![n];
        }
        let text = format!(
            "nn.matmul %{}, %{} : ({}, {}) -> {}",
            x.name,
            w.name,
            x.ty(),
            w.ty(),
            ty(&shape, out)
        );
        self.define(shape, out, text)
    }

    fn transpose(&mut self, x: &Value) -> Value {
        let mut perm: Vec<usize> = (0..x.shape.len()).collect();
        for i in (1..perm.len()).rev() {
            let j = self.b.below(i + 1);
            perm.swap(i, j);
        }
        let shape: Vec<usize> = perm.iter().map(|&p| x.shape[p]).collect();
        let text = format!(
            "nn.transpose %{} {{permutation = {}}} : {} -> {}",
            x.name,
            ints(perm.iter().map(|&p| p as i64)),
            x.ty(),
            ty(&shape, x.dtype)
        );
        self.define(shape, x.dtype, text)
    }

    fn reshape(&mut self, x: &Value) -> Value {
        // Split the element count into up to three factors.
        let mut left = numel(&x.shape);
        let mut shape = Vec::new();
        let rank = self.b.range(1, 3);
        for _ in 1..rank {
            let divisors: Vec<usize> = (1..=left).filter(|d| left % d == 0).collect();
            let d = divisors[self.b.below(divisors.len())];
            shape.push(d);
            left /= d;
        }
        shape.push(left);
        let text = format!(
            "nn.reshape %{} : {} -> {}",
            x.name,
            x.ty(),
            ty(&shape, x.dtype)
        );
        self.define(shape, x.dtype, text)
    }

    fn slice(&mut self, x: &Value) -> Value {
        let (mut starts, mut ends, mut steps, mut shape) = (vec![], vec![], vec![], vec![]);
        for &d in &x.shape {
            let step = self.b.range(1, 2) as i64;
            let backwards = d > 1 && self.b.below(3) == 0;
            let start = self.b.below(d) as i64;
            let (start, end, step, len) = if backwards {
                // From `start` down to `end` (exclusive, >= 0).
                let start = start.max(1);
                let end = self.b.below(start as usize) as i64;
                (start, end, -step, (start - end + step - 1) / step)
            } else {
                let end = self.b.range(start as usize + 1, d) as i64;
                (start, end, step, (end - start + step - 1) / step)
            };
            starts.push(start);
            ends.push(end);
            steps.push(step);
            shape.push(len as usize);
        }
        let text = format!(
            "nn.slice %{} {{starts = {}, ends = {}, steps = {}}} : {} -> {}",
            x.name,
            ints(starts),
            ints(ends),
            ints(steps),
            x.ty(),
            ty(&shape, x.dtype)
        );
        self.define(shape, x.dtype, text)
    }

    fn concat(&mut self, x: &Value) -> Value {
        let axis = self.b.below(x.shape.len());
        let mut other = x.shape.clone();
        other[axis] = self.b.range(1, 4);
        let mut shape = x.shape.clone();
        shape[axis] += other[axis];
        if numel(&shape) > MAX_ELEMS {
            return self.unary(x);
        }
        let y = self.operand_like(&other, x.dtype);
        let text = format!(
            "nn.concat %{}, %{} {{axis = {axis}}} : ({}, {}) -> {}",
            x.name,
            y.name,
            x.ty(),
            y.ty(),
            ty(&shape, x.dtype)
        );
        self.define(shape, x.dtype, text)
    }

    fn broadcast(&mut self, x: &Value) -> Value {
        // Expand dimensions of 1 and maybe add a leading one.
        let mut shape: Vec<usize> = x
            .shape
            .iter()
            .map(|&d| if d == 1 { self.b.range(1, 4) } else { d })
            .collect();
        if shape.len() < 3 && self.b.below(2) == 0 {
            shape.insert(0, self.b.range(1, 3));
        }
        if numel(&shape) > MAX_ELEMS {
            return self.unary(x);
        }
        let text = format!(
            "nn.broadcast %{} : {} -> {}",
            x.name,
            x.ty(),
            ty(&shape, x.dtype)
        );
        self.define(shape, x.dtype, text)
    }

    fn step(&mut self) {
        let x = self.operand();
        // FP8 values feed casts and matmuls; the other ops take wider floats.
        let choice = self.b.below(10);
        let _ = match (choice, x.dtype.is_fp8()) {
            (0 | 1, false) => self.unary(&x),
            (2 | 3, false) => self.binary(&x),
            (4, _) => self.cast(&x),
            (5, _) => self.matmul(&x),
            (6, false) => self.transpose(&x),
            (7, false) => self.reshape(&x),
            (8, false) => self.slice(&x),
            (9, false) if self.b.below(2) == 0 => self.concat(&x),
            (9, false) => self.broadcast(&x),
            (_, true) => self.cast(&x),
            _ => unreachable!("choice is below 10"),
        };
    }
}

/// A generated program: its text and the names of its arguments.
pub struct Program {
    pub text: String,
}

/// A program from `data`: one function `@main` of 1 to [`MAX_OPS`] ops,
/// returning the last value and maybe one more.
pub fn generate(data: &[u8]) -> Program {
    let mut b = Bytes::new(data);
    let n_ops = b.range(1, MAX_OPS);
    let mut g = Builder {
        b: &mut b,
        args: Vec::new(),
        values: Vec::new(),
        body: String::new(),
    };
    for _ in 0..n_ops {
        g.step();
        if g.b.exhausted() && !g.values.is_empty() {
            break;
        }
    }
    let mut results = vec![g.values.last().cloned().expect("at least one op ran")];
    if g.values.len() > 1 && g.b.below(2) == 0 {
        let i = g.b.below(g.values.len() - 1);
        results.insert(0, g.values[i].clone());
    }
    let args: Vec<String> = g
        .args
        .iter()
        .map(|a| format!("%{}: {} {{ipu.name = \"{}\"}}", a.name, a.ty(), a.name))
        .collect();
    let res_types: Vec<String> = results
        .iter()
        .enumerate()
        .map(|(i, r)| format!("{} {{ipu.name = \"r{i}\"}}", r.ty()))
        .collect();
    let names: Vec<String> = results.iter().map(|r| format!("%{}", r.name)).collect();
    let types: Vec<String> = results.iter().map(Value::ty).collect();
    let text = format!(
        "func.func @main({}) -> ({}) {{\n{}  return {} : {}\n}}\n",
        args.join(", "),
        res_types.join(", "),
        g.body,
        names.join(", "),
        types.join(", ")
    );
    Program { text }
}
