"""Gatys-style neural style transfer: optimise the pixels of an input image.

A small feature extractor stands in for VGG; content and style losses are
attached as modules, LBFGS drives the optimisation.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

use_cuda = torch.cuda.is_available()
Tensor = torch.cuda.FloatTensor if use_cuda else torch.FloatTensor


class Normalization(nn.Module):
    def __init__(self, mean: torch.Tensor, std: torch.Tensor):
        super().__init__()
        self.mean = torch.tensor(mean).view(-1, 1, 1)  # HAZARD: TCL002
        self.std = std.detach().clone().view(-1, 1, 1)  # OK: TCL002

    def forward(self, img):
        return (img - self.mean) / self.std


def gram_matrix(feat):
    b, c, h, w = feat.size()
    f = feat.view(b * c, h * w)
    return (f @ f.t()) / (b * c * h * w)


class ContentLoss(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target.detach()  # OK: TCL004
        self.loss = None

    def forward(self, x):
        self.loss = F.mse_loss(x, self.target)
        return x


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super().__init__()
        self.target = gram_matrix(target_feature).detach()
        self.loss = None

    def forward(self, x):
        self.loss = F.mse_loss(gram_matrix(x), self.target)
        return x


def build_model(content_img, style_img):
    mean = torch.tensor([0.485, 0.456, 0.406])
    std = torch.tensor([0.229, 0.224, 0.225])
    layers = [Normalization(mean, std)]
    content_losses, style_losses = [], []
    convs = [nn.Conv2d(3, 16, 3, padding=1), nn.Conv2d(16, 32, 3, padding=1), nn.Conv2d(32, 32, 3, padding=1)]
    model = nn.Sequential(*layers)
    for i, conv in enumerate(convs):
        model.add_module(f"conv_{i}", conv)
        model.add_module(f"relu_{i}", nn.ReLU(inplace=False))
        sl = StyleLoss(model(style_img))
        model.add_module(f"style_{i}", sl)
        style_losses.append(sl)
        if i == 1:
            cl = ContentLoss(model(content_img))
            model.add_module("content", cl)
            content_losses.append(cl)
    model.requires_grad_(False)
    return model, style_losses, content_losses


def to_image(t: torch.Tensor) -> np.ndarray:
    arr = t.squeeze(0).permute(1, 2, 0).cpu().numpy()
    arr *= 255.0  # HAZARD: TCL008
    return arr.clip(0, 255).astype(np.uint8)


def to_image_safe(t: torch.Tensor) -> np.ndarray:
    arr = t.squeeze(0).permute(1, 2, 0).cpu().numpy().copy()
    arr *= 255.0  # OK: TCL008
    return arr.clip(0, 255).astype(np.uint8)


class StyleTransfer:
    def __init__(self, content_img, style_img, style_weight=1e6, content_weight=1.0):
        self.model, self.style_losses, self.content_losses = build_model(content_img, style_img)
        self.style_weight = style_weight
        self.content_weight = content_weight
        self.activations = []
        self.model.relu_1.register_forward_hook(self._keep)
        self.content_img = content_img

    def _keep(self, module, inputs, output):
        self.activations.append(output)  # HAZARD: TCL009

    def noise_start(self):
        h, w = self.content_img.shape[-2:]
        return Tensor(1, 3, h, w).uniform_()  # HAZARD: TCL006

    def run(self, input_img, num_steps=300):
        input_img.requires_grad_(True)
        init_img = input_img.detach()  # HAZARD: TCL004
        init_copy = input_img.detach().clone()  # OK: TCL004
        optimizer = torch.optim.LBFGS([input_img])
        losses = []
        best = {"loss": float("inf")}
        step = [0]
        while step[0] <= num_steps:
            def closure():
                input_img.clamp_(0, 1)  # HAZARD: TCL007
                optimizer.zero_grad()
                self.model(input_img)
                style_score = self.style_weight * sum(sl.loss for sl in self.style_losses)
                content_score = self.content_weight * sum(cl.loss for cl in self.content_losses)
                loss = style_score + content_score
                loss.backward()
                losses.append(loss)  # HAZARD: TCL009
                if loss.item() < best["loss"]:
                    best["loss"] = loss.item()
                    self.best_img = input_img.clone()  # HAZARD: TCL003
                step[0] += 1
                return loss
            optimizer.step(closure)
            preview = input_img.detach()
            preview.mul_(255.0).round_().div_(255.0)  # HAZARD: TCL005
        input_img.data.clamp_(0, 1)  # HAZARD: TCL001
        change = (input_img.detach() - init_img).abs().mean().item()
        moved = (input_img.detach() - init_copy).abs().mean().item()
        return input_img, change, moved

    def run_tutorial(self, input_img, num_steps=300):
        input_img.requires_grad_(True)
        optimizer = torch.optim.LBFGS([input_img])
        for _ in range(num_steps // 20):
            def closure():
                with torch.no_grad():
                    input_img.clamp_(0, 1)  # OK: TCL007
                optimizer.zero_grad()
                self.model(input_img)
                loss = sum(sl.loss for sl in self.style_losses) * self.style_weight
                loss = loss + sum(cl.loss for cl in self.content_losses) * self.content_weight
                loss.backward()
                return loss
            optimizer.step(closure)
        input_img.detach().clamp_(0, 1)  # OK: TCL005
        return input_img
