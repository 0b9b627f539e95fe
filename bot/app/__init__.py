"""bot/app"""
