"""The same training script, fixed: torchcopy-lint reports nothing here."""

import copy

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
            best_state = copy.deepcopy(model.state_dict())  # a real snapshot

    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.99)

    model.load_state_dict(best_state)
    return model
