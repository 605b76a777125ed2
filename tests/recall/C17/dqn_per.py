"""DQN agent with a target network and proportional prioritised experience replay.

Usage: python dqn_per.py  (runs on a toy environment so it has no gym dependency)
"""
import copy
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OBS_SCALE = 4.0


def preprocess(obs: torch.Tensor) -> torch.Tensor:
    x = obs.float()
    x /= OBS_SCALE  # HAZARD: TCL008
    return x.unsqueeze(0)


def init_weights(m):
    if isinstance(m, nn.Linear):
        m.weight.normal_(0.0, 0.05)  # HAZARD: TCL007
        m.bias.zero_()  # HAZARD: TCL007


class QNetwork(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=128):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.head = nn.Linear(hidden, n_actions)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.head(x)


class PrioritizedReplay:
    def __init__(self, capacity, obs_dim, alpha=0.6):
        self.capacity = capacity
        self.alpha = alpha
        self.obs = np.zeros((capacity, obs_dim), dtype=np.float32)
        self.next_obs = np.zeros((capacity, obs_dim), dtype=np.float32)
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.dones = np.zeros(capacity, dtype=np.float32)
        self.priorities = torch.Tensor(capacity)  # HAZARD: TCL006
        self.ptr = 0
        self.size = 0

    def __len__(self):
        return self.size

    def add(self, obs, action, reward, next_obs, done):
        max_prio = self.priorities[: self.size].max().item() if self.size else 1.0
        self.obs[self.ptr] = obs
        self.actions[self.ptr] = action
        self.rewards[self.ptr] = reward
        self.next_obs[self.ptr] = next_obs
        self.dones[self.ptr] = float(done)
        self.priorities[self.ptr] = max_prio
        self.ptr = (self.ptr + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch_size, beta=0.4):
        prios = self.priorities[: self.size] ** self.alpha
        probs = prios / prios.sum()
        idx = torch.multinomial(probs, batch_size, replacement=True).numpy()
        weights = (self.size * probs[idx]) ** (-beta)
        weights = weights / weights.max()
        batch = (
            torch.tensor(self.obs[idx]),  # OK: TCL002
            torch.tensor(self.actions[idx]),
            torch.tensor(self.rewards[idx]),
            torch.tensor(self.next_obs[idx]),
            torch.tensor(self.dones[idx]),
        )
        return batch, idx, weights

    def update_priorities(self, idx, td_errors):
        self.priorities[idx] = td_errors + 1e-5


class DQNAgent:
    def __init__(self, obs_dim, n_actions, lr=1e-3, gamma=0.99, tau=0.005):
        self.policy_net = QNetwork(obs_dim, n_actions)
        self.policy_net.apply(init_weights)
        self.target_net = copy.deepcopy(self.policy_net)
        self.optimizer = torch.optim.Adam(self.policy_net.parameters(), lr=lr)
        self.gamma, self.tau, self.n_actions = gamma, tau, n_actions
        self.loss_history = []
        self.best_return = -float("inf")
        self.best_state = None
        self.init_params = [p.clone() for p in self.policy_net.parameters()]  # HAZARD: TCL003
        self.anchor = [p.detach().clone() for p in self.policy_net.parameters()]  # OK: TCL003

    def act(self, obs, eps):
        if random.random() < eps:
            return random.randrange(self.n_actions)
        obs_t = torch.as_tensor(obs, dtype=torch.float32)
        state = torch.tensor(preprocess(obs_t))  # HAZARD: TCL002
        with torch.no_grad():
            q = self.policy_net(state)
        return int(q.argmax())

    def learn(self, buffer, batch_size=64, beta=0.4):
        (obs, actions, rewards, next_obs, dones), idx, is_w = buffer.sample(batch_size, beta)
        q_all = self.policy_net(obs)
        q_sa = q_all.gather(1, actions.unsqueeze(1)).squeeze(1)
        with torch.no_grad():
            next_q = self.target_net(next_obs).max(1)[0]
            target_q = rewards + self.gamma * (1 - dones) * next_q
        td_error = q_sa - target_q
        loss = (is_w * td_error.pow(2)).mean()
        new_prio = td_error.detach()
        new_prio.abs_()  # HAZARD: TCL005
        buffer.update_priorities(idx, new_prio)
        self.optimizer.zero_grad()
        loss.backward()
        for p in self.policy_net.parameters():
            p.grad.clamp_(-1.0, 1.0)  # OK: TCL007
        self.optimizer.step()
        self.loss_history.append(loss)  # HAZARD: TCL009
        self.soft_update()
        return loss.item()

    def soft_update(self):
        for tp, p in zip(self.target_net.parameters(), self.policy_net.parameters()):
            tp.data.mul_(1.0 - self.tau)  # HAZARD: TCL001
            tp.data.add_(self.tau * p.data)  # HAZARD: TCL001

    def soft_update_safe(self):
        with torch.no_grad():
            for tp, p in zip(self.target_net.parameters(), self.policy_net.parameters()):
                tp.mul_(1.0 - self.tau).add_(p, alpha=self.tau)  # OK: TCL007

    def hard_update(self):
        self.target_net.load_state_dict(self.policy_net.state_dict())  # OK: TCL004

    def maybe_checkpoint(self, episode_return, path="dqn_best.pt"):
        if episode_return > self.best_return:
            self.best_return = episode_return
            self.best_state = self.policy_net.state_dict()  # HAZARD: TCL004
            torch.save(self.policy_net.state_dict(), path)  # OK: TCL004


class ToyEnv:
    def __init__(self, obs_dim=4, n_actions=2, horizon=200):
        self.obs_dim, self.n_actions, self.horizon = obs_dim, n_actions, horizon

    def reset(self):
        self.t = 0
        self.state = np.random.randn(self.obs_dim).astype(np.float32)
        return self.state.copy()

    def step(self, action):
        self.t += 1
        self.state += 0.1 * (action - 0.5) + 0.01 * np.random.randn(self.obs_dim).astype(np.float32)
        reward = 1.0 if abs(self.state[0]) < 2.0 else 0.0
        done = self.t >= self.horizon or reward == 0.0
        return self.state.copy(), reward, done


def train(episodes=200, batch_size=64, warmup=500):
    env = ToyEnv()
    agent = DQNAgent(env.obs_dim, env.n_actions)
    buffer = PrioritizedReplay(50_000, env.obs_dim)
    episode_losses = []
    for ep in range(episodes):
        obs, done, ep_ret = env.reset(), False, 0.0
        eps = max(0.05, 1.0 - ep / 100)
        while not done:
            action = agent.act(obs, eps)
            next_obs, reward, done = env.step(action)
            buffer.add(obs, action, reward, next_obs, done)
            obs, ep_ret = next_obs, ep_ret + reward
            if len(buffer) > warmup:
                episode_losses.append(agent.learn(buffer, batch_size))  # OK: TCL009
        if ep % 10 == 0:
            agent.hard_update()
        agent.maybe_checkpoint(ep_ret)
    drift = sum((p.detach() - p0).norm().item() for p, p0 in zip(agent.policy_net.parameters(), agent.anchor))
    print(f"best return {agent.best_return:.1f}, weight drift {drift:.3f}")
    return agent


if __name__ == "__main__":
    train()
