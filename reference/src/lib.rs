//! Numerics of the reference interpreter: element types with exact
//! rounding (f16, bf16, OCP FP8 with a power-of-two scale), the tensor
//! value, the `tensor` dialect's op set ([`OpKind`]) with shape inference,
//! the evaluator, and `.npy` I/O.

pub mod dtype;
pub mod error;
pub mod eval;
pub mod float8;
pub mod limits;
pub mod npy;
pub mod ops;
mod resize;
pub mod tensor;
mod window;

pub use dtype::ElementType;
pub use error::EvalError;
pub use eval::evaluate;
pub use float8::{round_to_type, Fp8Format};
pub use limits::check_tensor_size;
pub use ops::{
    broadcast_shapes, infer_shape, infer_type, normalize_slice, GeluApproximation, NearestMode,
    OpKind, PadMode, ReduceKind, ResizeCoordinate, ResizeMode, ScatterReduction,
};
pub use resize::resize_taps;
pub use tensor::{Tensor, TensorData, TensorType};
