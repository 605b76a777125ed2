"""TD3 (Fujimoto et al. 2018): twin critics, delayed policy updates, target policy smoothing."""
import copy
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Actor(nn.Module):
    def __init__(self, state_dim, action_dim, max_action):
        super().__init__()
        self.l1, self.l2, self.l3 = nn.Linear(state_dim, 256), nn.Linear(256, 256), nn.Linear(256, action_dim)
        self.max_action = max_action

    def forward(self, s):
        return self.max_action * torch.tanh(self.l3(F.relu(self.l2(F.relu(self.l1(s))))))


class Critic(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.q1 = nn.Sequential(nn.Linear(state_dim + action_dim, 256), nn.ReLU(), nn.Linear(256, 1))
        self.q2 = nn.Sequential(nn.Linear(state_dim + action_dim, 256), nn.ReLU(), nn.Linear(256, 1))

    def forward(self, s, a):
        sa = torch.cat([s, a], 1)
        return self.q1(sa), self.q2(sa)


class ReplayBuffer:
    def __init__(self, state_dim, action_dim, max_size=int(1e6)):
        self.max_size, self.ptr, self.size = max_size, 0, 0
        self.state = np.zeros((max_size, state_dim), dtype=np.float32)
        self.action = np.zeros((max_size, action_dim), dtype=np.float32)
        self.next_state = np.zeros((max_size, state_dim), dtype=np.float32)
        self.reward = np.zeros((max_size, 1), dtype=np.float32)
        self.not_done = np.zeros((max_size, 1), dtype=np.float32)
        self.recent_states = deque(maxlen=4)

    def add(self, state, action, next_state, reward, done, obs_noise=0.0):
        state_t = torch.as_tensor(state)
        self.recent_states.append(state_t)
        state += obs_noise * np.random.randn(*state.shape)  # HAZARD: TCL008
        self.state[self.ptr] = state
        self.action[self.ptr] = action
        self.next_state[self.ptr] = next_state
        self.reward[self.ptr] = reward
        self.not_done[self.ptr] = 1.0 - done
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def sample(self, batch_size):
        ind = np.random.randint(0, self.size, size=batch_size)
        return (
            torch.FloatTensor(self.state[ind]),  # HAZARD: TCL006
            torch.as_tensor(self.action[ind]),
            torch.as_tensor(self.next_state[ind]),
            torch.as_tensor(self.reward[ind]),
            torch.from_numpy(self.not_done[ind]),  # OK: TCL006
        )


class TD3:
    def __init__(self, state_dim, action_dim, max_action, discount=0.99, tau=0.005,
                 policy_noise=0.2, noise_clip=0.5, policy_freq=2, expl_noise=0.1):
        self.actor = Actor(state_dim, action_dim, max_action)
        self.actor_target = copy.deepcopy(self.actor)  # OK: TCL004
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.critic = Critic(state_dim, action_dim)
        self.critic_target = self.critic  # HAZARD: TCL004
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=3e-4)
        self.max_action, self.discount, self.tau = max_action, discount, tau
        self.policy_noise, self.noise_clip, self.policy_freq = policy_noise, noise_clip, policy_freq
        self.expl_noise = expl_noise
        self.total_it = 0
        self.critic_losses, self.actor_losses = [], []
        self.prev_q = None
        self.action_magnitudes = []

    def select_action(self, state: np.ndarray) -> torch.Tensor:
        s = torch.as_tensor(state, dtype=torch.float32).unsqueeze(0)
        action = self.actor(s)
        explore = action.detach()
        explore += self.expl_noise * self.max_action * torch.randn_like(explore)  # HAZARD: TCL005
        self.action_magnitudes.append(action.abs().mean().item())
        return explore.clamp(-self.max_action, self.max_action)

    def soft_update(self, net, target):
        for param, target_param in zip(net.parameters(), target.parameters()):
            target_param.data.copy_(self.tau * param.data + (1 - self.tau) * target_param.data)  # HAZARD: TCL001

    @torch.no_grad()
    def soft_update_nograd(self, net, target):
        for param, target_param in zip(net.parameters(), target.parameters()):
            target_param.mul_(1 - self.tau).add_(param, alpha=self.tau)  # OK: TCL007

    def train(self, replay_buffer, batch_size=256):
        self.total_it += 1
        state, action, next_state, reward, not_done = replay_buffer.sample(batch_size)
        reward = torch.tensor(reward, dtype=torch.float32)  # HAZARD: TCL002
        with torch.no_grad():
            noise = (torch.randn_like(action) * self.policy_noise).clamp(-self.noise_clip, self.noise_clip)
            next_action = (self.actor_target(next_state) + noise).clamp(-self.max_action, self.max_action)
            target_q1, target_q2 = self.critic_target(next_state, next_action)
            target_q = reward + not_done * self.discount * torch.min(target_q1, target_q2)
            q_snapshot = target_q.clone()  # OK: TCL003
        current_q1, current_q2 = self.critic(state, action)
        critic_loss = F.mse_loss(current_q1, target_q) + F.mse_loss(current_q2, target_q)
        self.critic_optimizer.zero_grad()
        critic_loss.backward()
        self.critic_optimizer.step()
        self.critic_losses.append(critic_loss)  # HAZARD: TCL009
        self.prev_q = current_q1.clone()  # HAZARD: TCL003
        if self.total_it % self.policy_freq == 0:
            actor_loss = -self.critic(state, self.actor(state))[0].mean()
            self.actor_optimizer.zero_grad()
            actor_loss.backward()
            self.actor_optimizer.step()
            self.actor_losses.append(actor_loss.item())  # OK: TCL009
            self.soft_update(self.critic, self.critic_target)
            self.soft_update_nograd(self.actor, self.actor_target)
        return q_snapshot

    def reset_actor_head(self):
        self.actor.l3.bias.zero_()  # HAZARD: TCL007

    def save(self, filename):
        torch.save(self.critic.state_dict(), filename + "_critic")
        torch.save(self.actor.state_dict(), filename + "_actor")
