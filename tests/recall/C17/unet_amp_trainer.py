"""Binary/multi-class U-Net segmentation trainer with AMP and gradient clipping."""
import copy
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


def double_conv(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
        nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
    )


class UNet(nn.Module):
    def __init__(self, in_ch=3, n_classes=2, base=16):
        super().__init__()
        self.enc1, self.enc2 = double_conv(in_ch, base), double_conv(base, base * 2)
        self.bottleneck = double_conv(base * 2, base * 4)
        self.up2 = nn.ConvTranspose2d(base * 4, base * 2, 2, stride=2)
        self.dec2 = double_conv(base * 4, base * 2)
        self.up1 = nn.ConvTranspose2d(base * 2, base, 2, stride=2)
        self.dec1 = double_conv(base * 2, base)
        self.final = nn.Conv2d(base, n_classes, 1)
        self.features = {}
        for name in ("enc1", "enc2", "bottleneck"):
            getattr(self, name).register_forward_hook(self._save_hook(name))

    def _save_hook(self, name):
        def hook(module, inputs, output):
            self.features[name] = output.clone()  # HAZARD: TCL003
        return hook

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        b = self.bottleneck(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(b), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.final(d1)


class SegDataset(Dataset):
    def __init__(self, images, masks):
        self.images, self.masks = images, masks  # numpy arrays N,H,W,3 uint8 / N,H,W uint8

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        img = torch.tensor(self.images[i].transpose(2, 0, 1), dtype=torch.float32) / 255.0  # OK: TCL002
        mask = torch.from_numpy(self.masks[i].astype(np.int64))
        return {"image": img, "mask": mask}


def init_final_bias(model, prior=0.01):
    bias_value = -float(np.log((1 - prior) / prior))
    model.final.bias.fill_(bias_value)  # HAZARD: TCL007


def init_final_bias_safe(model, prior=0.01):
    with torch.no_grad():
        model.final.bias.fill_(-float(np.log((1 - prior) / prior)))  # OK: TCL007


def standardize_weights(model):
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            w = m.weight
            m.weight.data = (w.data - w.data.mean(dim=(1, 2, 3), keepdim=True))  # HAZARD: TCL001


def grad_norm(model):
    total = 0.0
    for p in model.parameters():
        if p.grad is None:
            continue
        g = p.grad.detach()
        g.pow_(2)  # HAZARD: TCL005
        total += g.sum().item()
    return total ** 0.5


def dice_score(logits, target, eps=1e-6):
    probs = logits.softmax(1)[:, 1]
    fg = (target == 1).float()
    inter = (probs * fg).sum()
    return (2 * inter + eps) / (probs.sum() + fg.sum() + eps)


def class_frequencies(loader, n_classes):
    counts = torch.LongTensor(n_classes)  # HAZARD: TCL006
    for batch in loader:
        counts += torch.bincount(batch["mask"].flatten(), minlength=n_classes)
    return counts.float() / counts.sum()


def binarize(logits):
    probs = torch.softmax(logits, dim=1)
    hard = torch.FloatTensor(probs)  # HAZARD: TCL002
    hard[hard < 0.5] = 0.0
    return hard, probs


def validate(model, loader, device):
    model.eval()
    dice_scores = []
    for batch in loader:
        images, masks = batch["image"].to(device), batch["mask"].to(device)
        logits = model(images)
        dice_scores.append(dice_score(logits, masks))  # HAZARD: TCL009
    model.train()
    return torch.stack(dice_scores).mean().item()


@torch.no_grad()
def validate_safe(model, loader, device):
    model.eval()
    scores = []
    for batch in loader:
        logits = model(batch["image"].to(device))
        scores.append(dice_score(logits, batch["mask"].to(device)))  # OK: TCL009
    return torch.stack(scores).mean().item()


def log_images(batch, logits, step):
    hard, probs = binarize(logits.float())
    fg_frac = (hard[:, 1] > 0).float().mean().item()
    print(f"step {step}: mask classes {batch['mask'].unique().tolist()}, fg fraction {fg_frac:.3f}")


def train(model, train_loader, val_loader, epochs=20, lr=3e-4, device="cpu", ignore_index=255):
    model.to(device)
    init_final_bias(model)
    freqs = class_frequencies(train_loader, model.final.out_channels)
    print("class frequencies", freqs.tolist())
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler(enabled=(device == "cuda"))
    best_dice, best_weights = 0.0, None
    running_loss, step = 0.0, 0
    epoch_loss_sum = 0.0
    for epoch in range(epochs):
        for batch in train_loader:
            images = batch["image"].to(device)
            masks = batch["mask"].to(device)
            masks[masks == ignore_index] = 0  # HAZARD: TCL008
            with torch.autocast(device_type=device, enabled=(device == "cuda")):
                logits = model(images)
                loss = F.cross_entropy(logits, masks)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            scaler.step(optimizer)
            scaler.update()
            running_loss += loss  # HAZARD: TCL009
            epoch_loss_sum += loss.item()  # OK: TCL009
            step += 1
            if step % 100 == 0:
                log_images(batch, logits, step)
                print(f"grad norm {grad_norm(model):.3f}")
        val_dice = validate(model, val_loader, device)
        if val_dice > best_dice:
            best_dice = val_dice
            best_weights = model.state_dict()  # HAZARD: TCL004
            torch.save(model.state_dict(), os.path.join("/tmp", "unet_best.pt"))  # OK: TCL004
    if best_weights is not None:
        model.load_state_dict(best_weights)
    return model, float(running_loss) / max(step, 1)


class Checkpointer:
    def __init__(self):
        self.best = None

    def update(self, model):
        self.best = copy.deepcopy(model.state_dict())  # OK: TCL004


if __name__ == "__main__":
    imgs = np.random.randint(0, 255, (16, 32, 32, 3), dtype=np.uint8)
    msks = np.random.randint(0, 2, (16, 32, 32), dtype=np.uint8)
    dl = DataLoader(SegDataset(imgs, msks), batch_size=4, shuffle=True)
    train(UNet(), dl, dl, epochs=2)
