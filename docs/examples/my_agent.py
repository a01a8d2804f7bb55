"""An agent of your own, recorded by your own loop (docs/recording.md): run `python docs/examples/my_agent.py`,
or hand its factory to qtc play: `qtc play crafter --agent my_agent:make_agent` from this folder."""

import random

import qtc.record


class RandomAgent:
    def __init__(self, seed, actions):
        self.rng, self.actions = random.Random(seed), actions

    def choose(self, state):  # state: what the player sees before the step (docs/recording.md)
        action = self.rng.choice(self.actions)
        return action, f"a random step from ({state['x']}, {state['y']})"  # or just the action, or None to stop


def make_agent(seed):
    return RandomAgent(seed, ["move_left", "move_right", "move_up", "move_down", "do", "noop"])


if __name__ == "__main__":
    with qtc.record.open("crafter", out="traces", seed=0, agent="my-random", max_steps=100) as env:
        agent, state, ended = make_agent(0), env.reset(), False
        while not ended:
            action, reason = agent.choose(state)
            state, reward, ended = env.step(action, reason=reason)
    print(f"{env.path}: {env.ended_by}")
