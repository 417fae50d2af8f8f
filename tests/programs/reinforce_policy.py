"""REINFORCE and actor-critic on a small deterministic environment written in numpy; actions come from a
numpy RNG so both libraries follow the same trajectory; results as JSON.

Run as `python reinforce_policy.py` with PyTorch, or `python -m tapeflow.torch reinforce_policy.py` on tapeflow.
"""

import json

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical


class LineWorld:
    """Walk on a line: action 0 moves left, 1 right; reward for being near the goal."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def reset(self):
        self.pos = self.rng.uniform(-1, 1)
        self.t = 0
        return np.array([self.pos, 0.0, 1.0, self.pos ** 2])

    def step(self, action):
        self.pos += 0.2 if action == 1 else -0.2
        self.t += 1
        reward = 1.0 - abs(self.pos - 0.6)
        done = self.t >= 8
        return np.array([self.pos, self.t / 8, 1.0, self.pos ** 2]), reward, done


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 32)
        self.dropout = nn.Dropout(p=0.0)
        self.action_head = nn.Linear(32, 2)
        self.value_head = nn.Linear(32, 1)
        self.saved_log_probs = []
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.dropout(self.affine1(x)))
        return F.softmax(self.action_head(x), dim=-1), self.value_head(x)


def main():
    torch.manual_seed(543)
    model = Policy()
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.normal(scale=0.3, size=tuple(p.shape))).float())
    optimizer = optim.Adam(model.parameters(), lr=3e-2)
    eps = np.finfo(np.float32).eps.item()
    gamma = 0.99
    env = LineWorld(1)
    act_rng = np.random.default_rng(2)
    out = {"losses": [], "value_losses": [], "running": [], "entropy": [], "probs": []}
    running_reward = 10.0

    for episode in range(6):
        state, ep_reward = env.reset(), 0.0
        for _t in range(1, 100):
            state_t = torch.from_numpy(state).float().unsqueeze(0)
            probs, value = model(state_t)
            m = Categorical(probs)
            p_np = probs.detach().numpy()[0].astype(np.float64)
            action = torch.tensor([int(act_rng.choice(2, p=p_np / p_np.sum()))])
            model.saved_log_probs.append(m.log_prob(action))
            model.saved_actions.append((m.log_prob(action), value))
            out["entropy"].append(m.entropy().item())
            state, reward, done = env.step(action.item())
            model.rewards.append(reward)
            ep_reward += reward
            if done:
                break
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        R = 0
        returns = []
        for r in model.rewards[::-1]:
            R = r + gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        policy_loss, value_losses = [], []
        if episode % 2 == 0:
            for log_prob, R in zip(model.saved_log_probs, returns):
                policy_loss.append(-log_prob * R)
            optimizer.zero_grad()
            loss = torch.cat(policy_loss).sum()
            out["value_losses"].append(0.0)
        else:
            for (log_prob, value), R in zip(model.saved_actions, returns):
                advantage = R - value.item()
                policy_loss.append(-log_prob * advantage)
                value_losses.append(F.smooth_l1_loss(value.squeeze(0), torch.tensor([R])))
            optimizer.zero_grad()
            vl = torch.stack(value_losses).sum()
            loss = torch.stack(policy_loss).sum() + vl
            out["value_losses"].append(vl.item())
        loss.backward()
        optimizer.step()
        out["losses"].append(loss.item())
        out["running"].append(running_reward)
        del model.rewards[:]
        del model.saved_log_probs[:]
        del model.saved_actions[:]
    probs, _ = model(torch.from_numpy(np.array([[0.1, 0.5, 1.0, 0.01]])).float())
    out["probs"] = probs.tolist()
    out["weights"] = {k: v.tolist() for k, v in model.state_dict().items()}
    out["empty"] = [len(model.rewards), len(model.saved_log_probs)]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
