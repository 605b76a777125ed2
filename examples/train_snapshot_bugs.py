"""A small training script with the copy and aliasing bugs torchcopy-lint finds.

Run `torchcopy-lint examples/` to see them; every marked line is a finding.
"""

import torch
from torch import nn


def train(model: nn.Module, batches, epochs: int = 3):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.MSELoss()
    best_loss = float("inf")
    best_state = None

    for epoch in range(epochs):
        for inputs, targets in batches:
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            optimizer.step()

        if loss.item() < best_loss:
            best_loss = loss.item()
            best_state = model.state_dict()  # aliases the live weights: changes with every step

    # "Weight decay by hand": a write autograd never sees.
    for p in model.parameters():
        p.data.mul_(0.99)

    model.load_state_dict(best_state)
    return model
