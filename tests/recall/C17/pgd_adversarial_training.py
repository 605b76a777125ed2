"""Madry-style adversarial training with an L-inf PGD attack (CIFAR-like tensors)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CIFAR_MEAN = torch.tensor([0.4914, 0.4822, 0.4465]).view(1, 3, 1, 1)
CIFAR_STD = torch.tensor([0.2470, 0.2435, 0.2616]).view(1, 3, 1, 1)


def normalize(x: torch.Tensor) -> torch.Tensor:
    out = x.contiguous()
    out.sub_(CIFAR_MEAN).div_(CIFAR_STD)  # HAZARD: TCL008
    return out


def normalize_safe(x: torch.Tensor) -> torch.Tensor:
    return (x - CIFAR_MEAN) / CIFAR_STD


class Net(nn.Module):
    def __init__(self, n_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(64, n_classes)

    def forward(self, x):
        return self.head(self.features(normalize_safe(x)).flatten(1))


class PGDAttack:
    def __init__(self, model, eps=8 / 255, alpha=2 / 255, steps=7, random_start=True):
        self.model, self.eps, self.alpha, self.steps = model, eps, alpha, steps
        self.random_start = random_start
        self.best_delta = None

    def init_delta(self, x):
        if self.random_start:
            return torch.FloatTensor(x.shape).uniform_(-self.eps, self.eps)  # HAZARD: TCL006
        return torch.zeros_like(x)

    def perturb(self, x, y):
        delta = self.init_delta(x).requires_grad_(True)
        best_loss = torch.full((len(x),), -1e9)
        for _ in range(self.steps):
            loss_vec = F.cross_entropy(self.model(x + delta), y, reduction="none")
            loss_vec.sum().backward()
            improved = loss_vec.detach() > best_loss
            best_loss = torch.where(improved, loss_vec.detach(), best_loss)
            self.best_delta = delta.clone()  # HAZARD: TCL003
            delta.data.add_(self.alpha * delta.grad.sign())  # HAZARD: TCL001
            delta.data.clamp_(-self.eps, self.eps)  # HAZARD: TCL001
            delta.grad.zero_()  # OK: TCL007
        return (x + delta.detach()).clamp(0, 1)

    def perturb_inplace(self, x, y):
        delta = torch.zeros_like(x, requires_grad=True)
        for _ in range(self.steps):
            loss = F.cross_entropy(self.model(x + delta), y)
            grad, = torch.autograd.grad(loss, delta)
            delta += self.alpha * grad.sign()  # HAZARD: TCL007
            delta.clamp_(-self.eps, self.eps)  # HAZARD: TCL007
        return x + delta.detach()

    def perturb_safe(self, x, y):
        delta = torch.zeros_like(x, requires_grad=True)
        for _ in range(self.steps):
            loss = F.cross_entropy(self.model(x + delta), y)
            grad, = torch.autograd.grad(loss, delta)
            with torch.no_grad():
                delta += self.alpha * grad.sign()  # OK: TCL007
                delta.clamp_(-self.eps, self.eps)
        return (x + delta.detach()).clamp(0, 1)


def fgsm(model, x, y, eps):
    x = x.clone().requires_grad_(True)
    loss = F.cross_entropy(model(x), y)
    grad, = torch.autograd.grad(loss, x)
    x_adv = x.detach()
    x_adv += eps * grad.sign()  # HAZARD: TCL005
    x_adv.clamp_(0, 1)  # HAZARD: TCL005
    return x_adv, x


def fgsm_safe(model, images, y, eps):
    images = images.clone().requires_grad_(True)
    grad, = torch.autograd.grad(F.cross_entropy(model(images), y), images)
    x_adv = images.detach().clone()
    x_adv += eps * grad.sign()  # OK: TCL005
    return x_adv.clamp_(0, 1), images


def evaluate_robust(model, attack, loader):
    model.eval()
    adv_losses, correct, n = [], 0, 0
    for x, y in loader:
        x_adv = attack.perturb_safe(x, y)
        logits = model(x_adv)
        adv_losses.append(F.cross_entropy(logits, y))  # HAZARD: TCL009
        correct += (logits.argmax(1) == y).sum().item()
        n += len(y)
    model.train()
    return correct / n, torch.stack(adv_losses).mean().item()


def train(model, loader, epochs=5, lr=0.05):
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4)
    attack = PGDAttack(model)
    best_acc, best_state = 0.0, None
    clean_loss_total = 0.0
    for epoch in range(epochs):
        train_adv_loss = 0.0
        for x, y in loader:
            x_adv = attack.perturb(x, y)
            snapshot_input = torch.tensor(x_adv)  # HAZARD: TCL002
            model.zero_grad()
            loss_adv = F.cross_entropy(model(x_adv), y)
            loss_clean = F.cross_entropy(model(x), y)
            loss = 0.5 * (loss_adv + loss_clean)
            opt.zero_grad()
            loss.backward()
            opt.step()
            clean_loss_total += loss_clean  # HAZARD: TCL009
            train_adv_loss += loss_adv.item()  # OK: TCL009
        acc, _ = evaluate_robust(model, attack, loader)
        print(f"epoch {epoch}: robust acc {acc:.3f}, adv loss {train_adv_loss / len(loader):.3f}, "
              f"input range {snapshot_input.min():.2f}..{snapshot_input.max():.2f}")
        if acc > best_acc:
            best_acc = acc
            attack.best_state = model.state_dict()  # HAZARD: TCL004
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}  # OK: TCL004
    return best_state


if __name__ == "__main__":
    xs = torch.rand(128, 3, 32, 32)
    ys = torch.randint(0, 10, (128,))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xs, ys), batch_size=32)
    net = Net()
    imgs = normalize(xs[:4].clone())
    x_adv, x_used = fgsm(net, xs[:4], ys[:4], 8 / 255)
    print("fgsm changed clean copy:", bool((x_used != xs[:4]).any()), imgs.shape)
    train(net, loader, epochs=1)
