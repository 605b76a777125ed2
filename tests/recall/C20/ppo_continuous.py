"""PPO with a Gaussian policy and clipped value loss, for vectorised continuous-control envs."""
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Normal


class RolloutBuffer:
    def __init__(self):
        self.obs, self.actions, self.log_probs, self.rewards, self.dones = [], [], [], [], []

    def clear(self):
        self.__init__()


class ActorCritic(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=64):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, act_dim))
        self.critic = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.log_std = nn.Parameter(torch.Tensor(1, act_dim))  # HAZARD: TCL006
        nn.init.constant_(self.log_std, -0.5)

    def dist(self, obs):
        return Normal(self.actor(obs), self.log_std.exp())


class PPOAgent:
    def __init__(self, obs_dim, act_dim, n_envs, lr=3e-4, clip=0.2, target_kl=0.02):
        self.policy = ActorCritic(obs_dim, act_dim)
        self.opt = torch.optim.Adam(self.policy.parameters(), lr=lr)
        self.clip, self.target_kl = clip, target_kl
        self.buffer = RolloutBuffer()
        self.obs_buf = np.zeros((n_envs, obs_dim), dtype=np.float32)
        self.rew_buf = np.zeros(n_envs, dtype=np.float32)
        self.std_decay = 0.01
        self.stats = {"policy_loss": 0.0, "entropy": 0.0}

    def act(self, obs):
        dist = self.policy.dist(obs)
        action = dist.sample()
        log_prob = dist.log_prob(action).sum(-1)
        self.buffer.log_probs.append(log_prob)
        return action

    def collect(self, env, n_steps):
        self.obs_buf[:] = env.reset()
        for _ in range(n_steps):
            obs_t = torch.from_numpy(self.obs_buf)
            self.buffer.obs.append(obs_t)
            action = self.act(obs_t)
            next_obs, reward, done = env.step(action.numpy())
            self.buffer.actions.append(action)
            self.rew_buf[:] = reward
            self.buffer.rewards.append(torch.tensor(self.rew_buf))
            self.rew_buf[:] = 0.0  # OK: TCL008
            self.buffer.dones.append(torch.as_tensor(done, dtype=torch.float32))
            self.obs_buf[:] = next_obs  # HAZARD: TCL008

    def compute_advantages(self, gamma=0.99, lam=0.95):
        obs = torch.stack(self.buffer.obs)
        with torch.no_grad():
            values = self.policy.critic(obs).squeeze(-1)
        adv = torch.zeros_like(values)
        last = torch.zeros_like(values[0])
        for t in reversed(range(len(self.buffer.rewards))):
            nonterminal = 1.0 - self.buffer.dones[t]
            next_v = values[t + 1] if t + 1 < len(values) else torch.zeros_like(values[t])
            delta = self.buffer.rewards[t] + gamma * next_v * nonterminal - values[t]
            last = delta + gamma * lam * nonterminal * last
            adv[t] = last
        self.advantages, self.values = adv, values

    def update(self, epochs=4):
        obs = torch.stack(self.buffer.obs).flatten(0, 1)
        actions = torch.stack(self.buffer.actions).flatten(0, 1)
        old_logp_list = torch.tensor(self.buffer.log_probs)  # HAZARD: TCL002
        old_logp = self.policy.dist(obs).log_prob(actions).sum(-1).detach().clone()  # OK: TCL003
        old_values = self.policy.critic(obs).squeeze(-1).clone()  # HAZARD: TCL003
        norm_adv = self.advantages.detach()
        norm_adv -= norm_adv.mean()  # HAZARD: TCL005
        norm_adv = norm_adv.flatten()
        returns = (self.advantages + self.values).flatten()
        self.prev_policy_state = self.policy.state_dict()  # HAZARD: TCL004
        for epoch in range(epochs):
            dist = self.policy.dist(obs)
            logp = dist.log_prob(actions).sum(-1)
            ratio = (logp - old_logp).exp()
            policy_loss = -torch.min(ratio * norm_adv, ratio.clamp(1 - self.clip, 1 + self.clip) * norm_adv).mean()
            v = self.policy.critic(obs).squeeze(-1)
            v_clipped = old_values + (v - old_values).clamp(-self.clip, self.clip)
            value_loss = torch.max((v - returns) ** 2, (v_clipped - returns) ** 2).mean()
            entropy = dist.entropy().sum(-1).mean()
            loss = policy_loss + 0.5 * value_loss - 0.01 * entropy
            self.opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(self.policy.parameters(), 0.5)
            self.opt.step()
            self.policy.log_std.data.clamp_(-2.0, 0.5)  # HAZARD: TCL001
            self.stats["policy_loss"] += policy_loss  # HAZARD: TCL009
            self.stats["entropy"] += entropy.item()  # OK: TCL009
            approx_kl = (old_logp - logp).mean().item()
            if approx_kl > 1.5 * self.target_kl:
                self.policy.load_state_dict(self.prev_policy_state)
                break
        self.buffer.clear()
        return old_logp_list

    def decay_exploration(self):
        self.policy.log_std -= self.std_decay  # HAZARD: TCL007

    def decay_exploration_safe(self):
        with torch.no_grad():
            self.policy.log_std.sub_(self.std_decay).clamp_(-2.0, 0.5)  # OK: TCL007

    def save(self, path):
        torch.save(self.policy.state_dict(), path)  # OK: TCL004


class ToyEnv:
    def __init__(self, n_envs, obs_dim):
        self.n, self.d = n_envs, obs_dim

    def reset(self):
        return np.random.randn(self.n, self.d).astype(np.float32)

    def step(self, action):
        return self.reset(), -np.square(action).sum(-1), np.zeros(self.n, dtype=bool)


if __name__ == "__main__":
    agent = PPOAgent(obs_dim=4, act_dim=2, n_envs=3)
    env = ToyEnv(3, 4)
    agent.collect(env, 16)
    agent.compute_advantages()
    agent.update()
