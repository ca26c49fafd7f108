"""cgpredict: predict GPU (and FPGA) performance of single-threaded C kernels from a trace."""

__version__ = "0.1.0"
