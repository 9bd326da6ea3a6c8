#!/usr/bin/python3
"""Fit and export models/nadaraya-watson: d2l's parametric Nadaraya-Watson kernel regression (Dive into Deep
Learning, "Attention Pooling: Nadaraya-Watson Kernel Regression").

    /usr/bin/python3 training/train_nadaraya_watson.py

Data as d2l: 50 training x uniform in [0, 5), sorted; y = 2 sin x + x^0.8 + eps, eps ~ N(0, 0.5) (std 0.5);
test x = 0, 0.1, ..., 4.9 (50 points) with the noise-free truth. Model (the formula of attnscope's
kernelRegression): weights[i, j] = softmax_j(-((x_i - x_j) * w)^2 / 2), yPred = weights . yTrain, one learned
scalar w. Training as d2l: each training point is a query over the other 49 (leave-one-out), summed squared
error / 2, SGD lr 0.5, 5 epochs (full batch), w initialised from torch.rand(1).
Writes models/nadaraya-watson/config.json only (no safetensors): w, xTrain, yTrain, xTest, yTrue, and the
predictions with the learned w and with w = 1 for a conformance check.
"""
import torch

import common as C

SEED = 1234
EPOCHS = 5
DESCRIPTION = (
    "Nadaraya-Watson kernel regression, the simplest attention pooling: each query x attends to the 50 training "
    "inputs with weights softmax(-((x - x_j) * w)^2 / 2) and returns the weighted mean of their y. The heatmap is "
    "a diagonal band: a query looks at training points near it. With the learned w the band is narrower than "
    "with w = 1, so the prediction follows the noisy training points more closely (less smooth).")


def f(x):
    return 2 * torch.sin(x) + x ** 0.8


def pool(x_query, x_keys, y_values, w):
    """x_query [nq], x_keys / y_values [nq, nk] or [nk] -> (yPred [nq], weights [nq, nk])."""
    if x_keys.dim() == 1:
        x_keys = x_keys.expand(len(x_query), -1)
        y_values = y_values.expand(len(x_query), -1)
    weights = torch.softmax(-((x_query[:, None] - x_keys) * w) ** 2 / 2, dim=1)
    return (weights * y_values).sum(1), weights


def main():
    C.setup(SEED)
    n = 50
    x_train, _ = torch.sort(torch.rand(n) * 5)
    y_train = f(x_train) + torch.normal(0.0, 0.5, (n,))
    x_test = torch.arange(0, 5, 0.1)
    y_true = f(x_test)

    # Leave-one-out keys/values: row i holds every training point except i (d2l's X_tile[(1 - eye).bool()]).
    keep = ~torch.eye(n, dtype=torch.bool)
    keys = x_train.repeat(n, 1)[keep].reshape(n, n - 1)
    values = y_train.repeat(n, 1)[keep].reshape(n, n - 1)
    w = torch.rand(1, requires_grad=True)
    w_init = float(w)
    opt = torch.optim.SGD([w], lr=0.5)
    timer = C.Timer()
    losses = []
    for _ in range(EPOCHS):
        opt.zero_grad()
        pred, _ = pool(x_train, keys, values, w)
        loss = ((pred - y_train) ** 2 / 2).sum()
        loss.backward()
        opt.step()
        losses.append(float(loss))
        print("epoch %d loss %.4f w %.6f" % (len(losses), losses[-1], float(w)))
    seconds = timer()

    with torch.no_grad():
        pred_learned, _ = pool(x_test, x_train, y_train, w)
        pred_one, _ = pool(x_test, x_train, y_train, torch.tensor(1.0))
        mse_learned = float(((pred_learned - y_true) ** 2).mean())
        mse_one = float(((pred_one - y_true) ** 2).mean())
        loo_learned = float(((pool(x_train, keys, values, w)[0] - y_train) ** 2).mean())
        loo_one = float(((pool(x_train, keys, values, torch.tensor(1.0))[0] - y_train) ** 2).mean())
    print("w %.6f  test MSE learned %.4f  w=1 %.4f  LOO MSE learned %.4f  w=1 %.4f"
          % (float(w), mse_learned, mse_one, loo_learned, loo_one))

    out = C.model_dir("nadaraya-watson")
    C.write_json(out + "/config.json", {
        "format": "attnscope-model/1", "name": "nadaraya-watson", "task": "1-D kernel regression",
        "architecture": "kernel-regression", "description": DESCRIPTION,
        "w": C.flat(w)[0], "xTrain": C.flat(x_train), "yTrain": C.flat(y_train), "xTest": C.flat(x_test),
        "yTrue": C.flat(y_true),
        "reference": {"note": "kernelRegression({xTrain, yTrain, xQuery: xTest, w}) in PyTorch float32",
                      "yPredLearned": C.flat(pred_learned), "yPredW1": C.flat(pred_one)},
        "training": {
            "source": "synthetic, d2l: y = 2 sin x + x^0.8 + N(0, 0.5) noise, torch.manual_seed(%d)" % SEED,
            "licence": "generated data, no licence restrictions (same licence as attnscope)",
            "steps": EPOCHS, "seconds": round(seconds, 3), "params": 1,
            "metrics": {"wInit": round(w_init, 6), "w": round(float(w), 6), "trainLossPerEpoch": losses,
                        "testMseLearned": round(mse_learned, 6), "testMseW1": round(mse_one, 6),
                        "leaveOneOutMseLearned": round(loo_learned, 6), "leaveOneOutMseW1": round(loo_one, 6)}}},
        indent=1)


if __name__ == "__main__":
    main()
