"""REINFORCE with a learned state-value baseline on a toy corridor environment."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class Corridor:
    """Agent walks left/right on a line; reward at the right end."""

    def __init__(self, length=6, obs_dim=4):
        self.length, self.obs_dim = length, obs_dim

    def reset(self):
        self.pos = 0
        return self._obs()

    def _obs(self):
        o = np.zeros(self.obs_dim, dtype=np.float32)
        o[0], o[1] = self.pos / self.length, 1.0
        return o

    def step(self, action):
        self.pos = max(0, self.pos + (1 if action == 1 else -1))
        done = self.pos >= self.length
        return self._obs(), (1.0 if done else -0.01), done


class Policy(nn.Module):
    def __init__(self, obs_dim, n_actions=2, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh())
        self.head = nn.Linear(hidden, n_actions)
        self.head.weight.data.mul_(0.01)  # HAZARD: TCL001

    def forward(self, x):
        return F.softmax(self.head(self.body(x)), dim=-1)


class Agent:
    def __init__(self, obs_dim, gamma=0.99, lr=1e-2, baseline_lr=5e-3, eps=0.1):
        self.policy = Policy(obs_dim)
        self.baseline = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=lr)
        self.gamma, self.baseline_lr, self.eps = gamma, baseline_lr, eps
        self.states, self.log_probs, self.values, self.rewards = [], [], [], []

    def act(self, state):
        probs = self.policy(state)
        probs_np = probs.detach().cpu().numpy()
        probs_np[:] = (1 - self.eps) * probs_np + self.eps / len(probs_np)  # HAZARD: TCL008
        action = int(np.random.choice(len(probs_np), p=probs_np))
        dist = Categorical(probs)
        self.log_probs.append(dist.log_prob(torch.tensor(action)))  # OK: TCL009
        self.values.append(self.baseline(state).squeeze(-1))
        return action

    def discounted_returns(self):
        R, out = 0.0, []
        for r in reversed(self.rewards):
            R = r + self.gamma * R
            out.insert(0, R)
        return torch.tensor(out)  # OK: TCL002

    def learn(self):
        returns = self.discounted_returns()
        values = torch.tensor(self.values)  # HAZARD: TCL002
        values_g = torch.stack(self.values)  # OK: TCL002
        advantages = returns - values_g
        norm_adv = advantages.detach()
        norm_adv -= norm_adv.mean()  # HAZARD: TCL005
        policy_loss = -(torch.stack(self.log_probs) * norm_adv).sum()
        value_loss = advantages.pow(2).mean()
        self.opt.zero_grad()
        self.baseline.zero_grad()
        (policy_loss + value_loss).backward()
        self.opt.step()
        for p in self.baseline.parameters():
            p -= self.baseline_lr * p.grad  # HAZARD: TCL007
        with torch.no_grad():
            for p in self.baseline.parameters():
                p.clamp_(-10.0, 10.0)  # OK: TCL007
        del self.states[:], self.log_probs[:], self.values[:], self.rewards[:]
        return policy_loss, value_loss, values


def run_episode(env, agent, stack=2, max_steps=50):
    frames = np.zeros((stack, env.obs_dim), dtype=np.float32)
    obs = env.reset()
    ep_reward = 0.0
    for t in range(max_steps):
        frames[t % stack] = obs  # HAZARD: TCL008
        state = torch.from_numpy(frames).flatten()
        agent.states.append(state)
        obs, reward, done = env.step(agent.act(state))
        agent.rewards.append(reward)
        ep_reward += reward
        if done:
            break
    return ep_reward


def main(episodes=20):
    env = Corridor()
    agent = Agent(obs_dim=2 * env.obs_dim)
    old_policy = {k: v.clone() for k, v in agent.policy.named_parameters()}  # HAZARD: TCL003
    running_reward, best_reward, best_policy = 0.0, -1e9, None
    ep_losses = []
    for ep in range(episodes):
        ep_reward = run_episode(env, agent)
        policy_loss, value_loss, _ = agent.learn()
        ep_losses.append(policy_loss)  # HAZARD: TCL009
        running_reward = 0.05 * ep_reward + 0.95 * running_reward  # OK: TCL009
        if ep_reward > best_reward:
            best_reward = ep_reward
            best_policy = agent.policy  # HAZARD: TCL004
    first_obs = torch.FloatTensor(env.reset())  # HAZARD: TCL006
    start = torch.as_tensor(env.reset(), dtype=torch.float32)  # OK: TCL006
    kl = sum((v - old_policy[k]).pow(2).sum() for k, v in agent.policy.named_parameters())
    return best_policy, running_reward, float(kl), first_obs, start, ep_losses


if __name__ == "__main__":
    print(main()[1:3])
