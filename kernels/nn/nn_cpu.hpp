#pragma once
// Host references for every kernel in nn.hpp: plain C++, double precision, single-threaded,
// straightforward loops written from the formulas in nn.hpp (no shared code with the
// kernels). Same argument order and layouts as the GPU functions, without the stream; host
// pointers. Used by the tests (tests/nn_cpu_test.cpp checks them against finite
// differences, tests/nn_gpu_test.cpp checks the kernels against them).
// Bad sizes (negative, Hkv not dividing H) throw std::invalid_argument.
#include <cstddef>

namespace kernels::nn::cpu {

void bias_add(const double* x, const double* bias, double* y, int rows, int cols);
void column_sum(const double* dy, double* dbias, int rows, int cols);

void relu_forward(const double* x, double* y, std::size_t n);
void relu_backward(const double* x, const double* dy, double* dx, std::size_t n);
double gelu(double x);             // tanh approximation
double gelu_derivative(double x);  // d gelu / dx
void gelu_forward(const double* x, double* y, std::size_t n);
void gelu_backward(const double* x, const double* dy, double* dx, std::size_t n);

void add(const double* a, const double* b, double* c, std::size_t n);
void axpby(double alpha, const double* x, double beta, double* y, std::size_t n);  // beta 0: y not read
void fill(double* x, double value, std::size_t n);

void layernorm_forward(const double* x, const double* gamma, const double* beta, double* y,
                       double* mean, double* rstd, int rows, int cols, double eps);
void layernorm_backward(const double* x, const double* gamma, const double* mean,
                        const double* rstd, const double* dy, double* dx, double* dgamma,
                        double* dbeta, int rows, int cols);

void embedding_forward(const int* ids, const double* table, double* out, int rows, int dim);
// Accumulates into dtable (+=), as the GPU version.
void embedding_backward(const int* ids, const double* dout, double* dtable, int rows, int dim);

double positional_encoding(int pos, int c, int dim);  // PE(pos, c)
void add_positional_encoding(double* x, int batch, int seq, int dim);

// loss_sum[0], count[0] written; dlogits (rows, vocab) written.
void softmax_cross_entropy(const double* logits, const int* targets, double* loss_sum,
                           double* count, double* dlogits, int rows, int vocab,
                           int ignore_index, double grad_scale);
void mse(const double* pred, const double* target, double* loss_sum, double* dpred,
         std::size_t n, double grad_scale);

void adam_step(double* p, const double* g, double* m, double* v, std::size_t n, double lr,
               double b1, double b2, double eps, double wd, int t);
void sgd_step(double* p, const double* g, double* momentum_buf, std::size_t n, double lr,
              double momentum);

void sum_squares(const double* x, double* out, std::size_t n);  // out[0] +=
void clip_by_norm(double* x, std::size_t n, const double* sumsq, double max_norm);

void split_qkv(const double* qkv, double* q, double* k, double* v, int B, int N, int H, int d);
void merge_qkv(const double* dq, const double* dk, const double* dv, double* dqkv, int B, int N,
               int H, int d);
void bnhd_to_bhnd(const double* x, double* y, int B, int N, int H, int d);
void bhnd_to_bnhd(const double* x, double* y, int B, int N, int H, int d);
void transpose(const double* x, double* y, int rows, int cols);

void gemm_simple(bool transA, bool transB, int M, int N, int K, double alpha, const double* A,
                 const double* B, double beta, double* C);

// No scratch: per row of scores. Backward recomputes the forward itself.
void attention_naive_forward(const double* q, const double* k, const double* v, double* o,
                             double* lse, int B, int H, int Hkv, int N, int d, bool causal,
                             double scale);
void attention_naive_backward(const double* q, const double* k, const double* v,
                              const double* dout, double* dq, double* dk, double* dv, int B,
                              int H, int Hkv, int N, int d, bool causal, double scale);

}  // namespace kernels::nn::cpu
