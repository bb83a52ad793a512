// placeholder until kernels land
export const ABI_VERSION: i32 = 1
