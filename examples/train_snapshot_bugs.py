"""A small training script with the copy and aliasing bugs torchcopy-lint finds.

Run `torchcopy-lint examples/` to see them; the fixed version is train_snapshot_fixed.py.
"""

import torch
from torch import nn


def train(model: nn.Module, batches, epochs: int = 3):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.MSELoss()
    best_loss = float("inf")
    best_state = None
    initial_weight = model.weight.clone()  # stays in the autograd graph
    epoch_losses = []

    for epoch in range(epochs):
        total_loss = 0.0
        for inputs, targets in batches:
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            optimizer.step()
            total_loss += loss  # keeps every step's graph alive

        epoch_losses.append(total_loss)  # and keeps each epoch's chain of graphs
        if total_loss < best_loss:
            best_loss = total_loss
            best_state = model.state_dict()  # aliases the live weights: changes with every step

    # "Weight decay by hand": a write autograd never sees.
    for p in model.parameters():
        p.data.mul_(0.99)

    model.load_state_dict(best_state)
    return model, initial_weight, epoch_losses
