"""MindSpore's dtypes (`mindspore.common.dtype`, imported as `mstype`): anfora's, under
MindSpore's names."""

import anfora as _af

float16 = _af.float16
float32 = _af.float32
float64 = _af.float64
bfloat16 = _af.bfloat16
int8 = _af.int8
uint8 = _af.uint8
int32 = _af.int32
int64 = _af.int64
bool_ = _af.bool_
float_ = float32
half = float16
single = float32
double = float64
int_ = int64

__all__ = ["float16", "float32", "float64", "bfloat16", "int8", "uint8", "int32", "int64", "bool_", "float_",
           "half", "single", "double", "int_"]
