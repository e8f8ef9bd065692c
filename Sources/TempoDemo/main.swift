import Tempo

print("demo placeholder")
