"""The same training script, fixed: torchcopy-lint reports nothing here."""

import copy

import torch
from torch import nn


def train(model: nn.Module, batches, epochs: int = 3):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.MSELoss()
    best_loss = float("inf")
    best_state = None
    initial_weight = model.weight.detach().clone()  # a plain copy, outside the graph
    epoch_losses = []

    for epoch in range(epochs):
        total_loss = 0.0
        for inputs, targets in batches:
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            optimizer.step()
            total_loss += loss.item()  # a number, no graph

        epoch_losses.append(total_loss)
        if total_loss < best_loss:
            best_loss = total_loss
            best_state = copy.deepcopy(model.state_dict())  # a real snapshot

    with torch.no_grad():
        for p in model.parameters():
            p.mul_(0.99)

    model.load_state_dict(best_state)
    return model, initial_weight, epoch_losses
