"""Small models that export with dynamic shapes."""

import torch


class AddRows(torch.nn.Module):
    def forward(self, x, y):
        return x + y[:, :3].sum(dim=1, keepdim=True), x.reshape(-1)


def make():
    return AddRows(), (torch.randn(4, 3), torch.randn(4, 5))


def nested(x, d, scale=2):
    return x * scale + d["a"].sum() + d["b"][0]


def make_nested():
    return nested, (torch.randn(4, 3),), {"d": {"a": torch.randn(6), "b": [torch.randn(4, 3)]}}


def make_broken():
    raise RuntimeError("cannot build the model today")


def make_wrong():
    return torch.nn.Identity()


def data_dependent(x):
    if x.sum().item() > 0:
        return x + 1
    return x - 1


def make_data_dependent():
    return data_dependent, (torch.ones(4, 3),)


class RowSums(torch.nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0], -1, 4).sum(-1)


def make_batch1():
    return RowSums(), (torch.randn(1, 8),)


def squeezed(x):
    if x.shape[0] == 1:  # decided False only because export assumes sizes >= 2: a warning
        return x.sum(0)
    return x * 2


def make_branch():
    return squeezed, (torch.randn(4, 3),)


def div8(x):
    return x.reshape(2, -1, 8).sum(-1)  # needs x.size(1) % 8 == 0


def make_div8():
    return div8, (torch.randn(2, 16),)


def affine(y, z):
    return torch.cat([y, y, y[:1]]) + z  # z.size(0) == 2 * y.size(0) + 1


def make_affine():
    return affine, (torch.randn(3, 4), torch.randn(7, 4))
